"""The rules: one small class per code, all reading the shared dataflow's events."""

from __future__ import annotations

from exportlint.rules.base import Finding, Rule, RuleContext
from exportlint.rules.control import (
    DataDependentBranch, DataDependentLoop, ExportModeBranch, ShapeDependentBranch, TensorIteration,
)
from exportlint.rules.host import NumpyOnTensor, TensorItem, TensorToHost, TensorToScalar
from exportlint.rules.misc import AutogradFunctionWithoutSymbolic, HardcodedDevice
from exportlint.rules.onnx import OnnxUnsupportedOperator
from exportlint.rules.shapes import (
    DataDependentOutputShape, DataDependentSlice, RecurrentSequenceLength, ShapeSpecialisation, SizeTensorConcat,
    TensorFromRuntimeValues, TensorSizeArg,
)

ALL_RULES: tuple[type[Rule], ...] = (
    TensorItem,
    TensorToHost,
    TensorToScalar,
    TensorIteration,
    TensorFromRuntimeValues,
    DataDependentBranch,
    DataDependentLoop,
    ShapeDependentBranch,
    DataDependentSlice,
    DataDependentOutputShape,
    SizeTensorConcat,
    TensorSizeArg,
    ShapeSpecialisation,
    RecurrentSequenceLength,
    NumpyOnTensor,
    HardcodedDevice,
    ExportModeBranch,
    AutogradFunctionWithoutSymbolic,
    OnnxUnsupportedOperator,
)

__all__ = ["ALL_RULES", "Finding", "Rule", "RuleContext"]

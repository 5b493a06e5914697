"""EXL051 hard-coded devices, EXL070 custom autograd Functions."""

from __future__ import annotations

from typing import Iterator

from exportlint.analysis import events as ev
from exportlint.rules import fixers
from exportlint.rules.base import Finding, Rule, RuleContext


class HardcodedDevice(Rule):
    code = "EXL051"
    events = (ev.DeviceString,)

    def check(self, e: ev.DeviceString, ctx: RuleContext) -> Iterator[Finding]:
        yield self.finding(
            ctx,
            e.node,
            f"hard-coded device in `{ctx.code(e.node)}`: the exported graph is tied to `{e.text.strip('.()') or e.text}`",
            "follow the input's device instead: `.to(x.device)`, `torch.zeros(..., device=x.device)`, `x.new_zeros(...)`",
            fix=fixers.device(e, ctx),
        )


class AutogradFunctionWithoutSymbolic(Rule):
    code = "EXL070"
    events = (ev.AutogradApply,)

    def check(self, e: ev.AutogradApply, ctx: RuleContext) -> Iterator[Finding]:
        # torch.export and the ONNX dynamo exporter inline the forward (analyzed like any code):
        # only the TorchScript-based exporters care about a `symbolic`.
        if e.cls.has_symbolic() or not ctx.trace:
            return
        name = e.cls.name
        yield self.finding(
            ctx,
            e.node,
            f"`{name}.apply(...)`: custom autograd.Function `{name}` has no `symbolic` staticmethod",
            "jit.trace and the TorchScript ONNX exporter inline its forward (fine if the forward is traceable); add "
            "a `symbolic` staticmethod to choose the ONNX op for the TorchScript exporter",
        )

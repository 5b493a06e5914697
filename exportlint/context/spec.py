"""``exportlint spec FILE:Class``: a ready ``torch.export.export`` call for a root, with a
``dynamic_shapes`` dict built from ``forward``'s signature and the dims its code treats as dynamic,
and the ``dynamic_axes`` equivalent for the legacy ONNX exporter.

How each dim is decided (said in a comment next to it): the example's rank comes from an export
call of the root when there is one, else from how ``forward`` unpacks the input's shape
(``B, C, H, W = x.shape``); dim 0 is the batch; a dim named like channels / features (``C``,
``dim``, ``hidden``) or the channel dim of an image and the feature dim of a token tensor are fixed
by the layers that read them: static; image height / width and sequence lengths are dynamic, as
a multiple of the patch size when ``forward`` divides or checks them by a literal integer
(``H // 14``, ``W % 16``).
"""

from __future__ import annotations

import argparse
import os
import re
from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from exportlint.context.commands import CommandError, _common, _settings_and_context
from exportlint.context.model import Site

_STATIC_NAMES = re.compile(r"^(c|ch|chans|channels|in_chans|in_channels|d|dim|dims|e|embed_dim|hidden|hidden_size|features|num_features|k)$", re.I)
_NAMES = {"b": "batch", "bs": "batch", "batch": "batch", "batch_size": "batch", "n": "n", "h": "height", "w": "width",
          "t": "time", "l": "seq", "s": "seq", "seq_len": "seq", "seq_length": "seq", "length": "seq", "hw": "tokens"}
_TOKEN_INPUTS = re.compile(r"(input_ids|attention_mask|token_type_ids|position_ids|ids|tokens|mask)$")


@dataclass
class DimPlan:
    index: int
    dynamic: bool
    name: str
    why: str
    multiple: int | None = None
    example: int = 2
    min: int = 2  # the smallest size the layers accept without specialising a later size to 0 or 1


@dataclass
class InputPlan:
    param: str
    rank: int | None
    dims: list[DimPlan] = field(default_factory=list)
    example: str = ""


def spec_command(argv: list[str]) -> int:
    p = argparse.ArgumentParser(
        prog="exportlint spec",
        description="Print a torch.export.export call with dynamic_shapes for an nn.Module class "
        "(and the dynamic_axes of the legacy ONNX exporter).",
    )
    p.add_argument("root", metavar="FILE:Class", help="the module to export, e.g. models/vit.py:ViT or pkg.models:Net")
    _common(p)
    args = p.parse_args(argv)
    target, sep, name = args.root.rpartition(":")
    if not sep or not (name.isidentifier() or name.isdigit()):
        raise CommandError(f"spec {args.root!r}: expected FILE:Class, module:Class or FILE:LINE (an export call)")
    paths = args.paths or ["."]
    overrides: dict[str, Any] = {"export": {"roots": [args.root]}} if name.isidentifier() else {}
    if args.torch_version:
        overrides.setdefault("export", {})["torch-version"] = args.torch_version
    _, context, _ = _settings_and_context(paths, args.config, overrides)
    if name.isdigit():  # an export call: its root
        here = os.path.abspath(target)
        root_site = next((s for s in context.sites if os.path.abspath(s.path) == here and s.span.line == int(name)), None)
        if root_site is None or root_site.root is None:
            why = root_site.why_unresolved if root_site is not None else "no export call starts on that line"
            raise CommandError(f"spec {args.root!r}: {why} (see `exportlint sites`)")
    else:
        root_site = next(s for s in context.sites if s.declared)
    sites = [s for s in context.sites if not s.declared and s.root is not None and s.root == root_site.root]
    print(render_spec(root_site, sites))
    return 0


def plan_inputs(root_site: Site, sites: list[Site]) -> list[InputPlan]:
    from exportlint.analysis.project import Project

    assert root_site.root is not None
    project = Project([root_site.root.path])
    index = project.index(root_site.root.path)
    cls = index.classes[root_site.root.name] if index is not None else None
    found = cls.find_method("forward") if cls is not None else None
    fn: cst.FunctionDef | None = found[1] if found else None
    body = cst.Module([fn]).code if fn is not None else ""
    whole = cst.Module([cls.node]).code if cls is not None and getattr(cls, "node", None) is not None else body
    plans = []
    for i, param in enumerate(root_site.root.params):
        shapes = [s.inputs[i].shape for s in sites if s.inputs is not None and i < len(s.inputs) and s.inputs[i].shape is not None]
        example_shape = shapes[0] if shapes else None
        names = _unpacked_names(body, param)
        rank = len(example_shape) if example_shape is not None else (len(names) if names else None)
        plan = InputPlan(param, rank)
        for d in range(rank or 1):
            dim = _decide(param, d, rank, names[d] if names and d < len(names) else None, body,
                          example_shape[d] if example_shape is not None else None)
            if dim.dynamic and rank == 4 and d >= 2 and not dim.multiple:
                dim.min = 2 * _first_conv_reach(whole)
                dim.example = max(dim.example, dim.min)
            plan.dims.append(dim)
        plan.example = _example(plan, example_shape, whole)
        plans.append(plan)
    return plans


def _unpacked_names(body: str, param: str) -> list[str] | None:
    m = re.search(rf"^\s*([\w\s,*]+?)\s*=\s*{re.escape(param)}\.(?:shape|size\(\))\s*$", body, re.M)
    if not m:
        return None
    names = [n.strip().lstrip("*") for n in m.group(1).split(",") if n.strip()]
    return names if all(n.isidentifier() for n in names) else None


def _decide(param: str, d: int, rank: int | None, name: str | None, body: str, example: int | None) -> DimPlan:
    label = _NAMES.get((name or "").lower(), (name or "").lower() or f"{param}_{d}")
    if d == 0 and not (rank == 1):
        return DimPlan(d, True, "batch", "dim 0: the batch", example=max(example or 2, 2))
    if rank == 4 and d == 1:
        return DimPlan(d, False, name or "channels", "dim 1 of an image: channels, fixed by the first conv")
    if name and _STATIC_NAMES.match(name):
        return DimPlan(d, False, name, f"`{name}`: channels / features, fixed by the layers that read them")
    if rank == 3 and d == 2 and not _TOKEN_INPUTS.search(param):
        return DimPlan(d, False, name or "features", "last dim of a token tensor: features, fixed by its linear / norm layers")
    multiple = None
    if name:
        m = re.search(rf"\b{re.escape(name)}\s*(?://|%)\s*(\d+)\b", body)
        multiple = int(m.group(1)) if m and int(m.group(1)) > 1 else None
    why = f"`{name}` is read from the input's shape" if name else "a spatial / sequence dim"
    if multiple:
        why += f"; the code divides it by {multiple}: a multiple of {multiple}"
    default = 224 if rank == 4 else 16
    size = example if example and example >= 2 else default
    if multiple and size % multiple:
        size = multiple * max(2, size // multiple)
    return DimPlan(d, True, _identifier(label), why, multiple, size)


def _identifier(text: str) -> str:
    out = re.sub(r"\W", "_", text)
    return out if out.isidentifier() else f"d_{out}"


def _example(plan: InputPlan, shape: tuple[int | None, ...] | None, class_code: str) -> str:
    if plan.rank is None:
        return f"torch.randn(2, ...)  # TODO: the shape of `{plan.param}`"
    sizes = []
    for dim in plan.dims:
        known = shape[dim.index] if shape is not None else None
        sizes.append(str(dim.example if dim.dynamic else (known if known is not None else _fixed_size(class_code, plan.rank))))
    factory = "torch.randint(0, 100, ({}))" if _TOKEN_INPUTS.search(plan.param) else "torch.randn({})"
    inner = ", ".join(sizes) + ("," if len(sizes) == 1 and "randint" in factory else "")
    return factory.format(inner)


def _first_conv_reach(class_code: str) -> int:
    """The first conv's largest kernel size or stride (1 without a literal one): an image smaller
    than twice that makes a later size 0 or 1, which torch.export specialises."""
    m = re.search(r"Conv2d\(\s*[\w.]+\s*,\s*[\w.]+\s*,\s*([\w.]+)(?:\s*,\s*([\w.]+))?", class_code)
    if not m:
        return 1
    sizes = [_int_of(g, class_code) for g in m.groups() if g]
    return max([n for n in sizes if n is not None] or [1])


def _int_of(text: str, class_code: str) -> int | None:
    """A literal, or a name (``patch``, ``self.patch``) with a literal default in the class."""
    if text.isdigit():
        return int(text)
    name = text.rsplit(".", 1)[-1]
    m = re.search(rf"\b{re.escape(name)}\s*(?::\s*\w+\s*)?=\s*(\d+)\b", class_code)
    return int(m.group(1)) if m else None


def _fixed_size(class_code: str, rank: int | None) -> int:
    """The size a layer fixes: the first conv's input channels (images), the first linear /
    norm layer's width (tokens); 3 when the code does not say."""
    pattern = r"Conv[123]d\(\s*(\d+)" if rank == 4 else r"(?:Linear|LayerNorm)\(\s*(\d+)"
    m = re.search(pattern, class_code)
    return int(m.group(1)) if m else 3


def render_spec(root_site: Site, sites: list[Site]) -> str:
    assert root_site.root is not None
    plans = plan_inputs(root_site, sites)
    root = root_site.root
    lines = [
        "import torch",
        "from torch.export import Dim",
        "",
        f"# {root.name}: how each dim was decided",
    ]
    dims_declared: dict[str, str] = {}
    for plan in plans:
        for dim in plan.dims:
            lines.append(f"#   {plan.param}[{dim.index}] {'dynamic' if dim.dynamic else 'static '}: {dim.why}")
            if dim.dynamic and dim.name not in dims_declared:
                if dim.multiple:
                    dims_declared[dim.name] = f'{dim.multiple} * Dim("{dim.name}_blocks", min=2)'
                else:
                    dims_declared[dim.name] = f'Dim("{dim.name}"{f", min={dim.min}" if dim.min > 2 else ""})'
    lines.append("")
    for name, text in dims_declared.items():
        lines.append(f"{name} = {text}")
    lines.append("")
    example_args = ", ".join(p.example for p in plans)
    lines.append(f"model = {root.name}(...).eval()  # build it as your script does")
    lines.append(f"args = ({example_args}{',' if len(plans) == 1 else ''})")
    shapes = ", ".join(
        f'"{p.param}": {{' + ", ".join(f"{d.index}: {d.name}" for d in p.dims if d.dynamic) + "}" for p in plans
    )
    lines.append(f"ep = torch.export.export(model, args, dynamic_shapes={{{shapes}}})")
    lines.append("")
    lines.append("# The legacy ONNX exporter (dynamo=False) takes the same dims as dynamic_axes:")
    axes = ", ".join(
        f'"{p.param}": {{' + ", ".join(f'{d.index}: "{d.name}"' for d in p.dims if d.dynamic) + "}" for p in plans
    )
    names = ", ".join(f'"{p.param}"' for p in plans)
    lines.append(f'torch.onnx.export(model, args, "{root.name.lower()}.onnx", dynamo=False, input_names=[{names}],')
    lines.append(f"                  dynamic_axes={{{axes}}})")
    return "\n".join(lines)

"""The rules' fix producers for values (EXL042 sizes, EXL040 size tensors, EXL051 devices); EXL020's
are in :mod:`exportlint.rules.fixers_control`.  Each returns a callable the engine runs on a kept finding
(:class:`~exportlint.fixes.syntax.FixSite` in, :class:`~exportlint.fixes.syntax.FixPlan` or None out).

Every claim here is measured (rules/*.md "Fix", tests/test_fixes_*.py): a *safe* fix keeps eager
results identical on every input the finding's premise allows (sizes are non-negative ints).
"""

from __future__ import annotations

import libcst as cst

from exportlint.analysis import events as ev
from exportlint.analysis import torchapi as api
from exportlint.fixes.model import SAFE, UNSAFE
from exportlint.fixes.syntax import FixPlan, FixSite, Producer, descendants, names_in, parenthesized, positional_params
from exportlint.rules.base import RuleContext

# ---------------------------------------------------------------------------------------------
# EXL042: integer size arithmetic instead of floats; len(t) -> t.shape[0]

_INT_OPS = (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Modulo)


def _integral(node: cst.BaseExpression) -> bool:
    """Integer arithmetic on names, attributes, subscripts and `.size(...)` (no floats, no `/`)."""
    if isinstance(node, (cst.Name, cst.Integer)):
        return True
    if isinstance(node, cst.Attribute):
        return _integral(node.value) if not isinstance(node.value, cst.Name) else True
    if isinstance(node, cst.Subscript):
        return _integral(node.value) and all(
            isinstance(el.slice, cst.Index) and _integral(el.slice.value) for el in node.slice
        )
    if isinstance(node, cst.BinaryOperation):
        return isinstance(node.operator, _INT_OPS) and _integral(node.left) and _integral(node.right)
    if isinstance(node, cst.UnaryOperation):
        return isinstance(node.operator, cst.Minus) and _integral(node.expression)
    if isinstance(node, cst.Call):
        return (
            isinstance(node.func, cst.Attribute) and node.func.attr.value == "size"
            and _integral(node.func.value) and all(_integral(a.value) for a in node.args)
        )
    return False


_INT_AUG = (cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign, cst.FloorDivideAssign, cst.ModuloAssign)


def _size_read(node: cst.BaseExpression) -> bool:
    """``x.shape[i]``, ``x.size(i)``, ``x.ndim``, ``len(...)``: a Python int by construction."""
    if isinstance(node, cst.Subscript):
        return isinstance(node.value, cst.Attribute) and node.value.attr.value == "shape"
    if isinstance(node, cst.Attribute):
        return node.attr.value in ("ndim",)
    if isinstance(node, cst.Call):
        if isinstance(node.func, cst.Name):
            return node.func.value == "len"
        return isinstance(node.func, cst.Attribute) and node.func.attr.value in ("size", "dim", "numel") and (
            node.func.attr.value != "size" or len(node.args) == 1
        )
    return False


def _shape_sequence(node: cst.BaseExpression) -> bool:
    """``x.shape``, ``x.shape[a:b]``, ``x.size()``: unpacked into ints."""
    if isinstance(node, cst.Attribute):
        return node.attr.value == "shape"
    if isinstance(node, cst.Subscript):
        return _shape_sequence(node.value) and all(isinstance(el.slice, cst.Slice) for el in node.slice)
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "size" and not node.args


def proven_int(site: FixSite, fn: cst.FunctionDef, node: cst.BaseExpression, signed: bool = True, depth: int = 0) -> bool:
    """Is ``node`` a Python int on every path: integer literals and size reads combined with
    ``+ - * // %``, and names every binding of which (in ``fn``) is such an expression or an
    unpacking of a shape?  Parameters and attributes are not proven (they may hold floats).
    ``signed=False``: also never negative (no subtraction or negation anywhere)."""
    if depth > 6:
        return False
    if isinstance(node, cst.Integer) or _size_read(node):
        return True
    if isinstance(node, cst.BinaryOperation):
        ops = _INT_OPS if signed else (cst.Add, cst.Multiply, cst.FloorDivide, cst.Modulo)
        return isinstance(node.operator, ops) and all(
            proven_int(site, fn, side, signed, depth + 1) for side in (node.left, node.right)
        )
    if isinstance(node, cst.UnaryOperation):
        return signed and isinstance(node.operator, cst.Minus) and proven_int(site, fn, node.expression, signed, depth + 1)
    if not isinstance(node, cst.Name):
        return False
    bindings = site.bindings(fn, node.value)
    return bool(bindings) and all(_binds_int(site, fn, b, signed, depth + 1) for b in bindings)


def _binds_int(site: FixSite, fn: cst.FunctionDef, b: cst.CSTNode, signed: bool, depth: int) -> bool:
    if isinstance(b, cst.Assign) and len(b.targets) == 1:
        target = b.targets[0].target
        if isinstance(target, cst.Name):
            return proven_int(site, fn, b.value, signed, depth)
        return isinstance(target, (cst.Tuple, cst.List)) and _shape_sequence(b.value)
    if isinstance(b, cst.AugAssign):
        ops = _INT_AUG if signed else (cst.AddAssign, cst.MultiplyAssign, cst.FloorDivideAssign, cst.ModuloAssign)
        return isinstance(b.operator, ops) and proven_int(site, fn, b.value, signed, depth)
    if isinstance(b, cst.For) and isinstance(b.target, cst.Name) and isinstance(b.iter, cst.Call):
        return isinstance(b.iter.func, cst.Name) and b.iter.func.value == "range" and all(
            proven_int(site, fn, a.value, signed, depth) for a in b.iter.args
        )
    return False


def conversion(e: ev.ShapeConversion, ctx: RuleContext) -> Producer | None:
    """``int(h / s)`` -> ``h // s``, ``math.floor(h / s)`` -> ``h // s``, ``math.ceil(h / s)`` ->
    ``(h + s - 1) // s``, ``int(h)`` -> ``h``, ``len(t)`` -> ``t.shape[0]``."""
    call = e.node
    form = e.form
    if form in ("torch.as_tensor()", "torch.asarray()") and isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute):
        # of a Python int the two build the same int64 tensor; only torch.tensor stays symbolic under export
        return lambda site: FixPlan(
            "use `torch.tensor(...)`, which every exporter keeps symbolic", SAFE, [(call.func.attr, "tensor")],
        )
    if not isinstance(call, cst.Call) or len(call.args) != 1 or call.args[0].keyword or call.args[0].star:
        return None
    arg = call.args[0].value
    if form == "len()":
        return lambda site: FixPlan(
            f"use `{site.code(arg)}.shape[0]`, which every exporter keeps symbolic",
            SAFE, [(call, parenthesized(site.code(arg), arg) + ".shape[0]")],
        )
    if form not in ("int()", "math.floor()", "math.ceil()") or e.value.has("root"):
        return None
    if not (isinstance(arg, cst.BinaryOperation) and isinstance(arg.operator, cst.Divide)):
        if form != "int()" or e.value.has("float") or not _integral(arg):
            return None  # only `int(h)` of an integer size is fixed without a division

        def plain(site: FixSite) -> FixPlan | None:
            fn = site.function(call)
            if fn is None or not proven_int(site, fn, arg):
                return None  # `int(h * self.ratio)`: the int() may be what makes it an integer
            return FixPlan("drop `int()`: the size already is an integer", SAFE, [(call, parenthesized(site.code(arg), arg))])

        return plain
    num, den = arg.left, arg.right
    if not _integral(num):
        return None
    literal = isinstance(den, cst.Integer) and int(den.evaluated_value) > 0
    if not literal and not _integral(den):
        return None

    def make(site: FixSite) -> FixPlan | None:
        n, d = site.code(num), site.code(den)
        # Proven equal for integer operands and a positive literal divisor; `int()` truncates,
        # which equals floor division only on non-negative numerators.
        fn = site.function(call)
        safe = literal and fn is not None and proven_int(site, fn, num, signed=form != "int()")
        how = SAFE if safe else UNSAFE
        if form == "math.ceil()":
            bump = f"{int(den.evaluated_value) - 1}" if literal else f"{parenthesized(d, den)} - 1"
            text = f"({n} + {bump}) // {parenthesized(d, den)}"
            return FixPlan(f"integer ceiling `{text}`", how, [(call, text)])
        text = f"{parenthesized(n, num)} // {parenthesized(d, den)}"
        return FixPlan(f"integer division `{text}`", how, [(call, text)])

    return make


# ---------------------------------------------------------------------------------------------
# EXL040: size=(grid[0], grid[1]) with grid = torch.tensor([a, b]) -> size=(a, b)


def size_tensor_elements(e: ev.SizeArg, ctx: RuleContext) -> Producer | None:
    node = e.node
    parts = [el.value for el in node.elements] if isinstance(node, (cst.Tuple, cst.List)) else [node]
    subs = [p for p in parts if isinstance(p, cst.Subscript) and isinstance(p.value, cst.Name)]
    if not subs:
        return None

    def make(site: FixSite) -> FixPlan | None:
        fn = site.function(node)
        if fn is None:
            return None
        replace: list[tuple[cst.CSTNode, str]] = []
        sources: dict[str, cst.Assign] = {}
        for sub in subs:
            found = _tensor_literal_element(site, fn, sub, node)
            if found is not None:
                assign, element = found
                sources[sub.value.value] = assign  # type: ignore[attr-defined]
                replace.append((sub, site.code(element)))
        if not replace:
            return None
        plan = FixPlan("pass the sizes as Python ints instead of elements of a size tensor", SAFE, replace)
        replaced = {id(sub.value) for sub, _ in replace}  # type: ignore[attr-defined]
        for name, assign in sources.items():
            line = site.parent(assign)
            if all(id(n) in replaced for n in site.loads(fn, name)) and isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1:
                plan.delete_lines.append(line)  # the size tensor is now unused
        return plan

    return make


def _tensor_literal_element(site: FixSite, fn: cst.FunctionDef, sub: cst.Subscript, use: cst.CSTNode):
    """(assignment, element) when ``sub`` is ``g[i]`` of ``g = torch.tensor([e0, e1, …])``,
    assigned once in ``fn`` before ``use``, and every name ``e_i`` reads still holds the value
    it had there (no binding of it after the assignment)."""
    if len(sub.slice) != 1 or not isinstance(sub.slice[0].slice, cst.Index):
        return None
    index = sub.slice[0].slice.value
    if not isinstance(index, cst.Integer):
        return None
    name = sub.value.value  # type: ignore[attr-defined]
    bindings = site.bindings(fn, name)
    if len(bindings) != 1 or not isinstance(bindings[0], cst.Assign):
        return None
    assign = bindings[0]
    call = assign.value
    if len(assign.targets) != 1 or not isinstance(call, cst.Call) or not call.args:
        return None
    if site.file.qualify(call.func) not in api.TENSOR_CTORS or not site.before(assign, use):
        return None
    data = call.args[0].value
    if call.args[0].keyword or not isinstance(data, (cst.List, cst.Tuple)):
        return None
    elements = data.elements
    i = int(index.evaluated_value)
    if i >= len(elements) or any(isinstance(el, cst.StarredElement) for el in elements):
        return None
    element = elements[i].value
    if any(isinstance(n, cst.Call) and not _integral(n) for n in descendants(element)):
        return None  # evaluated again later: only side-effect-free arithmetic
    for read in names_in(element) - {"self"}:
        if any(not isinstance(b, cst.Param) and not site.before(b, assign) for b in site.bindings(fn, read)):
            return None
    return assign, element


# ---------------------------------------------------------------------------------------------
# EXL051: a hard-coded device -> the device of an input tensor in scope


def device(e: ev.DeviceString, ctx: RuleContext) -> Producer | None:
    node = e.node

    def make(site: FixSite) -> FixPlan | None:
        fn = site.function(node)
        source = _input_tensor(site, fn) if fn is not None else None
        if source is None:
            return None
        where = f"{source}.device"
        message = f"follow the input's device: `{where}`"
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "cuda":
            if node.args:
                return None
            receiver = node.func.value
            code = site.code(receiver)
            text = code if code == source else f"{parenthesized(code, receiver)}.to({where})"
            return FixPlan(message, UNSAFE, [(node, text)])
        if isinstance(node, cst.Call):  # x.to("cuda"), torch.device("cuda")
            if not node.args or node.args[0].keyword:
                return None
            if isinstance(node.func, cst.Attribute) and node.func.attr.value == "to":
                return FixPlan(message, UNSAFE, [(node.args[0].value, where)])
            return FixPlan(message, UNSAFE, [(node, where)])
        return FixPlan(message, UNSAFE, [(node, where)])  # device="cuda" (or a conditional)

    return make


def _input_tensor(site: FixSite, fn: cst.FunctionDef) -> str | None:
    """The first positional parameter that is a required tensor (annotated as one, or not annotated)."""
    params = positional_params(fn)
    if params and params[0].name.value in ("self", "cls") and isinstance(site.parent(site.parent(fn) or fn), cst.ClassDef):
        params = params[1:]
    for p in params:
        if p.default is not None:
            continue
        annotation = site.code(p.annotation.annotation) if p.annotation is not None else "Tensor"
        if "Tensor" in annotation and "None" not in annotation and "Optional" not in annotation:
            return p.name.value
        return None
    return None

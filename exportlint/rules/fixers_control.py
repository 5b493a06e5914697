"""EXL020's fix producers: a check on data becomes ``torch._assert_async``; a branch whose arms
only return or assign becomes ``torch.where`` (unsafe: both sides run).  See rules/EXL020-*.md "Fix"."""

from __future__ import annotations

import libcst as cst

from exportlint.analysis import events as ev
from exportlint.fixes.model import DISPLAY_ONLY, UNSAFE
from exportlint.fixes.syntax import FixPlan, FixSite, Producer, names_in, torch_name
from exportlint.rules.base import RuleContext

def _header_comment(site: FixSite, stmt: cst.If) -> str | None:
    """The comment of an ``if``'s header line, to keep on the replacement ("" without one);
    None when another comment inside the statement would be lost."""
    header = stmt.body.header.comment if isinstance(stmt.body, cst.IndentedBlock) else None
    others = [n for n in site.walk(stmt) if isinstance(n, cst.Comment) and n is not header]
    if others:
        return None
    return f"  {header.value}" if header is not None else ""


_PYTHON_TESTS = (cst.Is, cst.IsNot, cst.In, cst.NotIn)


def _tensor_condition(node: cst.BaseExpression) -> bool:
    """A condition that evaluates to a tensor: `and` / `or` / `not` / `is` / `in` give Python
    bools, and `torch.where` / `_assert_async` need the tensor."""
    if isinstance(node, cst.BooleanOperation) or (isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not)):
        return False
    return not (isinstance(node, cst.Comparison) and any(isinstance(c.operator, _PYTHON_TESTS) for c in node.comparisons))


def _value(site: FixSite, node: cst.BaseExpression) -> str | None:
    """An expression's code for the rewrite, or None: not None, a bool or a string, and on one
    line (a rewritten multi-line expression would lose its layout)."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)) or (
        isinstance(node, cst.Name) and node.value in ("None", "True", "False")
    ):
        return None
    code = site.code(node)
    return None if "\n" in code or "\r" in code else code


def _numbers(*nodes: cst.BaseExpression) -> bool:
    """Only number literals: `1 if c else 0` is a Python number the code goes on using as one."""
    return all(
        isinstance(n, (cst.Integer, cst.Float))
        or (isinstance(n, cst.UnaryOperation) and isinstance(n.expression, (cst.Integer, cst.Float)))
        for n in nodes
    )


def data_branch(e: ev.Branch, ctx: RuleContext) -> Producer | None:
    if not e.cond.is_definite_tensor or not _tensor_condition(e.cond_node):
        return None  # torch.where / _assert_async need a tensor condition, not a Python bool
    if e.kind == "assert":
        return lambda site: _assert_async(site, e, ctx)
    if e.kind == "guard":
        return lambda site: _guard(site, e, ctx)
    if e.kind == "ifexp":
        return lambda site: _ifexp(site, e)
    if e.kind == "if":
        return lambda site: _if_where(site, e)
    return None


def _assert_applicability(ctx: RuleContext) -> str:
    # torch.export keeps the assertion in the graph; jit.trace and both ONNX exporters drop it.
    return DISPLAY_ONLY if ctx.trace else UNSAFE


def _message(msg: cst.BaseExpression | None) -> str:
    if isinstance(msg, cst.SimpleString) and "f" not in msg.prefix.lower() and "b" not in msg.prefix.lower():
        return f", {msg.value}"
    return ""


def _assert_async(site: FixSite, e: ev.Branch, ctx: RuleContext) -> FixPlan | None:
    stmt = site.parent(e.cond_node)
    torch = torch_name(site)
    if not isinstance(stmt, cst.Assert) or torch is None:
        return None
    cond = _value(site, e.cond_node)
    if cond is None:
        return None
    text = f"{torch}._assert_async({cond}{_message(stmt.msg)})"
    return FixPlan("keep the check in the graph with `torch._assert_async`", _assert_applicability(ctx), [(stmt, text)])


def _guard(site: FixSite, e: ev.Branch, ctx: RuleContext) -> FixPlan | None:
    stmt = e.node
    torch = torch_name(site)
    comment = _header_comment(site, stmt) if isinstance(stmt, cst.If) else None
    if not isinstance(stmt, cst.If) or stmt.orelse is not None or torch is None or comment is None:
        return None
    body = list(stmt.body.body) if isinstance(stmt.body, cst.IndentedBlock) else []
    if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine) or len(body[0].body) != 1:
        return None
    raise_ = body[0].body[0]
    if not isinstance(raise_, cst.Raise) or not isinstance(raise_.exc, cst.Call):
        return None
    args = raise_.exc.args
    msg = _message(args[0].value) if len(args) == 1 and not args[0].keyword else ""
    if args and not msg:
        return None
    cond = _value(site, e.cond_node)
    if cond is None:
        return None
    text = f"{torch}._assert_async({torch}.logical_not({cond}){msg}){comment}"
    return FixPlan("keep the check in the graph with `torch._assert_async`", _assert_applicability(ctx), [(stmt, text)])


def _where(site: FixSite, torch: str, test: cst.BaseExpression, a: "cst.BaseExpression | str", b: "cst.BaseExpression | str") -> str | None:
    """``torch.where(test, a, b)`` (an arm given as a string is a name kept as it is), or None."""
    if not isinstance(a, str) and not isinstance(b, str) and _numbers(a, b):
        return None
    codes = [_value(site, test)] + [x if isinstance(x, str) else _value(site, x) for x in (a, b)]
    return None if None in codes else f"{torch}.where({', '.join(codes)})"  # type: ignore[arg-type]


def _ifexp(site: FixSite, e: ev.Branch) -> FixPlan | None:
    node = site.parent(e.cond_node)
    torch = torch_name(site)
    if not isinstance(node, cst.IfExp) or torch is None:
        return None
    text = _where(site, torch, node.test, node.body, node.orelse)
    return None if text is None else FixPlan("compute both sides and select with `torch.where` (both run)", UNSAFE, [(node, text)])


def _arm(block: cst.BaseSuite) -> list[cst.BaseSmallStatement] | None:
    if not isinstance(block, cst.IndentedBlock):
        return None
    out = []
    for line in block.body:
        if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
            return None
        out.append(line.body[0])
    return out


def _assignments(stmts: list[cst.BaseSmallStatement]) -> dict[str, cst.BaseExpression] | None:
    """name -> value of an arm that only assigns names, each once, from values that read no name
    the arm assigned before."""
    out: dict[str, cst.BaseExpression] = {}
    for s in stmts:
        if not isinstance(s, cst.Assign) or len(s.targets) != 1 or not isinstance(s.targets[0].target, cst.Name):
            return None
        name = s.targets[0].target.value
        if name in out or names_in(s.value) & set(out):
            return None
        out[name] = s.value
    return out


def _if_where(site: FixSite, e: ev.Branch) -> FixPlan | None:
    stmt = e.node
    torch = torch_name(site)
    fn = site.function(stmt)
    comment = _header_comment(site, stmt) if isinstance(stmt, cst.If) else None
    if not isinstance(stmt, cst.If) or torch is None or fn is None or comment is None:
        return None
    if stmt.orelse is not None and not isinstance(stmt.orelse, cst.Else):
        return None  # an elif chain
    body = _arm(stmt.body)
    other = _arm(stmt.orelse.body) if stmt.orelse is not None else []
    if body is None or other is None:
        return None
    returns = [s for s in body + other if isinstance(s, cst.Return)]
    if returns:
        return _return_where(site, stmt, body, other, torch, comment)
    true, false = _assignments(body), _assignments(other)
    if not true or false is None:
        return None
    order = list(true) + [n for n in false if n not in true]
    lines, done = [], set()
    for name in order:
        a, b = true.get(name), false.get(name)
        if (a is None or b is None) and not _tensor_before(site, fn, stmt, name):
            return None  # the other arm keeps the value the name had before the if: a tensor?
        parts = [stmt.test] + [x for x in (a, b) if x is not None]
        if any(names_in(p) & done for p in parts):
            return None  # would read a name already replaced above
        where = _where(site, torch, stmt.test, name if a is None else a, name if b is None else b)
        if where is None:
            return None
        lines.append(f"{name} = {where}" + ("" if lines else comment))
        done.add(name)
    text = ("\n" + site.indent(stmt)).join(lines)
    return FixPlan("compute both arms and select with `torch.where` (both run)", UNSAFE, [(stmt, text)])


def _tensor_before(site: FixSite, fn: cst.FunctionDef, stmt: cst.If, name: str) -> bool:
    """Does ``name`` hold a value before ``stmt`` that may be a tensor: bound before it, never to
    None (no `= None` default, no `Optional` annotation, no `name is None` test in ``fn``)?"""
    before = [b for b in site.bindings(fn, name) if isinstance(b, cst.Param) or site.before(b, stmt)]
    if not before:
        return False
    for b in before:
        if isinstance(b, cst.Param):
            annotation = site.code(b.annotation.annotation) if b.annotation is not None else ""
            if (b.default is not None and site.code(b.default) == "None") or "None" in annotation or "Optional" in annotation:
                return False
        elif isinstance(b, cst.Assign) and isinstance(b.value, cst.Name) and b.value.value == "None":
            return False
    return not any(
        isinstance(n, cst.Comparison) and isinstance(n.left, cst.Name) and n.left.value == name
        and any(isinstance(c.operator, (cst.Is, cst.IsNot)) for c in n.comparisons)
        for n in site.walk(fn.body)
    )


def _return_where(site: FixSite, stmt: cst.If, body, other, torch: str, comment: str) -> FixPlan | None:
    """``if c: return a`` + ``else: return b`` (or a ``return b`` right after the if)."""
    if len(body) != 1 or not isinstance(body[0], cst.Return) or body[0].value is None:
        return None
    end: cst.CSTNode = stmt
    if other:
        if len(other) != 1 or not isinstance(other[0], cst.Return) or other[0].value is None:
            return None
        false = other[0].value
    else:
        block = site.parent(stmt)
        siblings = list(getattr(block, "body", ()))
        i = next((k for k, s in enumerate(siblings) if s is stmt), None)
        after = siblings[i + 1] if i is not None and i + 1 < len(siblings) else None
        if not isinstance(after, cst.SimpleStatementLine) or len(after.body) != 1:
            return None
        ret = after.body[0]
        if not isinstance(ret, cst.Return) or ret.value is None or after.leading_lines:
            return None
        false, end = ret.value, ret
    where = _where(site, torch, stmt.test, body[0].value, false)
    if where is None:
        return None
    text = f"return {where}{comment}"
    line, col, _, _ = site.span(stmt)
    _, _, end_line, end_col = site.span(end)
    if end is not stmt:
        return FixPlan("compute both sides and select with `torch.where` (both run)", UNSAFE,
                       [((line, col, end_line, end_col), text)])
    return FixPlan("compute both sides and select with `torch.where` (both run)", UNSAFE, [(stmt, text)])

"""What a rule's fix producer reads from the libcst tree, and the plan it returns.

A producer (``Finding.fix``) is called only for a finding that survived the dispatcher, with a
:class:`FixSite` for the top-level statement the finding is in.  It returns a :class:`FixPlan`
in terms of nodes (replace this node's text, delete that statement's line); the site turns it
into positioned :class:`~exportlint.fixes.model.Edit` s.  Everything here is derived from the
syntax tree, so the dataflow stays untouched.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields as dataclass_fields
from typing import Callable, Iterator

import libcst as cst

from exportlint.analysis.index import FileIndex
from exportlint.diagnostics import Target
from exportlint.files import split_lines
from exportlint.fixes.model import Edit, Fix


@dataclass
class FixPlan:
    message: str
    applicability: str
    # (node, or a (line, column, end_line, end_column) range, new text)
    replace: list[tuple["cst.CSTNode | tuple[int, int, int, int]", str]] = field(default_factory=list)
    delete_lines: list[cst.SimpleStatementLine] = field(default_factory=list)


# What a rule hands the engine with a finding: called with the finding's site once it is kept.
Producer = Callable[["FixSite"], "FixPlan | None"]

# Expressions that need no parentheses as the receiver of `.attr` or as an operand of `//`.
ATOMIC = (cst.Name, cst.Attribute, cst.Subscript, cst.Call, cst.Integer, cst.Float, cst.SimpleString)


def parenthesized(code: str, node: cst.BaseExpression) -> str:
    return code if isinstance(node, ATOMIC) or node.lpar else f"({code})"


def descendants(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(n.children)


def torch_name(site: "FixSite") -> str | None:
    """The name the site's file imports torch as (a fix that calls torch needs one)."""
    names = [local for local, qual in site.file.imports.items() if qual == "torch"]
    return "torch" if "torch" in names else (names[0] if names else None)


def names_in(node: cst.CSTNode) -> set[str]:
    """Every name an expression reads (``self`` of ``self.patch`` included)."""
    out: set[str] = set()

    def walk(n: cst.CSTNode) -> None:
        if isinstance(n, cst.Name):
            out.add(n.value)
        elif isinstance(n, cst.Attribute):
            walk(n.value)  # the attribute's own name is not a variable
            return
        for c in n.children:
            walk(c)

    walk(node)
    return out


def _assigned_names(target: cst.CSTNode) -> Iterator[str]:
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for el in target.elements:
            yield from _assigned_names(el.value)
    elif isinstance(target, cst.StarredElement):
        yield from _assigned_names(target.value)


def _bound_by(node: cst.CSTNode) -> list[str]:
    """Names a statement-level node binds (assignments, loops, with, imports, defs)."""
    if isinstance(node, cst.Assign):
        return [n for t in node.targets for n in _assigned_names(t.target)]
    if isinstance(node, (cst.AnnAssign, cst.AugAssign)):
        return list(_assigned_names(node.target))
    if isinstance(node, (cst.For, cst.CompFor)):
        return list(_assigned_names(node.target))
    if isinstance(node, cst.NamedExpr):
        return list(_assigned_names(node.target))
    if isinstance(node, cst.WithItem) and node.asname is not None:
        return list(_assigned_names(node.asname.name))
    if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        return [node.name.value]
    if isinstance(node, cst.ImportAlias):
        name = node.asname.name if node.asname is not None else node.name
        return [cst.Module(body=[]).code_for_node(name).split(".")[0]] if isinstance(name, (cst.Name, cst.Attribute)) else []
    if isinstance(node, cst.ExceptHandler) and node.name is not None:
        return list(_assigned_names(node.name.name))
    return []


_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_nodes(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """``node``'s child nodes, in no particular order, read from its dataclass fields (libcst's
    ``children`` runs a visitor per call: building one parent map of a class with it cost more than
    the analysis of the class in the language server)."""
    names = _FIELDS.get(type(node))
    if names is None:
        names = _FIELDS[type(node)] = tuple(f.name for f in dataclass_fields(node))
    for name in names:
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            yield value
        elif isinstance(value, (list, tuple)):
            for item in value:
                if isinstance(item, cst.CSTNode):
                    yield item


class FixSite:
    """One top-level statement of a file: parents, positions and text for fix producers."""

    def __init__(self, file: FileIndex, top: object, target: Target) -> None:
        self.file = file
        self.top = top
        self.target = target
        root = top if isinstance(top, cst.CSTNode) else file.module
        self._parents: dict[int, cst.CSTNode] = {}
        if root is not None:
            stack = [root]
            while stack:
                n = stack.pop()
                for c in _child_nodes(n):
                    self._parents[id(c)] = n
                    stack.append(c)

    # -- tree
    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self._parents.get(id(node))

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        p = self.parent(node)
        while p is not None:
            yield p
            p = self.parent(p)

    def known(self, node: cst.CSTNode) -> bool:
        return id(node) in self._parents

    def function(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        return next((a for a in self.ancestors(node) if isinstance(a, cst.FunctionDef)), None)

    def statement(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The statement holding ``node``: a small statement, or the compound statement whose
        header holds it."""
        for a in self.ancestors(node):
            if isinstance(a, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
                return a
        return None

    def walk(self, root: cst.CSTNode) -> Iterator[cst.CSTNode]:
        """``root`` and its descendants, in source order (nested functions and classes excluded)."""
        stack = [root]
        while stack:
            n = stack.pop()
            yield n
            if n is not root and isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                continue
            stack.extend(reversed(n.children))

    def bindings(self, fn: cst.FunctionDef, name: str) -> list[cst.CSTNode]:
        """The nodes of ``fn`` that bind ``name`` (parameters as the Param)."""
        out: list[cst.CSTNode] = [p for p in _params(fn) if p.name.value == name]
        for n in self.walk(fn.body):
            if name in _bound_by(n):
                out.append(n)
        return out

    def loads(self, fn: cst.FunctionDef, name: str) -> list[cst.Name]:
        """Every ``Name`` node of ``fn`` spelling ``name`` outside binding targets."""
        return [n for n in self.walk(fn.body) if isinstance(n, cst.Name) and n.value == name and not self._is_target(n)]

    def _is_target(self, n: cst.Name) -> bool:
        p = self.parent(n)
        if isinstance(p, (cst.AssignTarget, cst.For, cst.CompFor, cst.AsName, cst.NamedExpr, cst.AugAssign, cst.AnnAssign)):
            return getattr(p, "target", getattr(p, "name", None)) is n
        if isinstance(p, (cst.Attribute,)):
            return p.attr is n
        if isinstance(p, (cst.Param, cst.FunctionDef, cst.ClassDef, cst.Arg)):
            return getattr(p, "name", None) is n or getattr(p, "keyword", None) is n
        return False

    def before(self, a: cst.CSTNode, b: cst.CSTNode) -> bool:
        return self.span(a)[:2] < self.span(b)[:2]

    # -- text
    def code(self, node: cst.CSTNode) -> str:
        return self.file.code(node)

    def span(self, node: cst.CSTNode) -> tuple[int, int, int, int]:
        return self.file.span(node, self.top)

    def indent(self, node: cst.CSTNode) -> str:
        """The leading whitespace of the line ``node`` starts on."""
        line, col, _, _ = self.span(node)
        text = getattr(self.file, "_text", None)
        if text:
            lines = split_lines(text)
            if line <= len(lines):
                return lines[line - 1][: col - 1]
        return " " * (col - 1)

    def resolve(self, plan: FixPlan) -> Fix:
        edits = [Edit(*(self.span(n) if isinstance(n, cst.CSTNode) else n), text) for n, text in plan.replace]
        for stmt in plan.delete_lines:
            line, _, end_line, _ = self.span(stmt)
            edits.append(Edit(line, 1, end_line + 1, 1, ""))
        return Fix(plan.message, plan.applicability, tuple(sorted(edits, key=lambda e: e.start)))


def _params(fn: cst.FunctionDef) -> list[cst.Param]:
    p = fn.params
    return [*p.posonly_params, *p.params, *p.kwonly_params] + [
        x for x in (p.star_arg, p.star_kwarg) if isinstance(x, cst.Param)
    ]


def positional_params(fn: cst.FunctionDef) -> list[cst.Param]:
    p = fn.params
    return [*p.posonly_params, *p.params]

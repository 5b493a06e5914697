"""Source positions, computed lazily and only for files that have something to report.

libcst's ``PositionProvider`` goes through the metadata machinery and costs about 2.4x a
parse here; most files never need a position.  This module re-generates the code of a
module once with a light code-generation state that records the syntactic range of every
node (the same ranges ``PositionProvider`` gives), at roughly the cost of ``module.code``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import libcst as cst
from libcst._nodes.internal import CodegenState


# Nodes libcst gives no syntactic range to (their range here includes owned whitespace).
_NO_SYNTACTIC_POSITION = {
    cst.StarredElement, cst.Arg, cst.CompFor, cst.Element, cst.SubscriptElement, cst.Index,
    cst.Slice, cst.WithItem, cst.AssignTarget, cst.CompIf,
}


_PARENTHESIZABLE = {
    t for t in vars(cst).values() if isinstance(t, type) and issubclass(t, cst.BaseExpression) and "lpar" in getattr(t, "__dataclass_fields__", {})
}


class _Recorder:
    __slots__ = ("state", "node", "start_node", "end_node", "start")

    def __init__(self, state: "_PositionState", node: Any, start_node: Any, end_node: Any) -> None:
        self.state = state
        self.node = node
        self.start_node = start_node
        self.end_node = end_node

    def __enter__(self) -> None:
        self.start = (self.state.line, self.state.column)

    def __exit__(self, *exc: object) -> None:
        st = self.state
        ranges = st.ranges
        start = self.start
        if self.start_node is not None and id(self.start_node) in ranges:
            start = ranges[id(self.start_node)][0]
        end = (st.line, st.column)
        if self.end_node is not None and id(self.end_node) in ranges:
            end = ranges[id(self.end_node)][1]
        ranges[id(self.node)] = (start, end)


@dataclass
class _PositionState(CodegenState):
    line: int = 1
    column: int = 0  # code points, 0-based
    ranges: dict[int, tuple[tuple[int, int], tuple[int, int]]] = field(default_factory=dict)
    # Start of the first opening parenthesis of parenthesized expressions: `(a, b)` starts at `(`.
    paren_starts: dict[int, tuple[int, int]] = field(default_factory=dict)

    _open: list[tuple[int, tuple[int, int]]] = field(default_factory=list)

    def before_codegen(self, node: Any) -> None:
        t = type(node)
        if t in _NO_SYNTACTIC_POSITION:
            self._open.append((id(node), (self.line, self.column)))
        elif t in _PARENTHESIZABLE and node.lpar:
            self.paren_starts[id(node)] = (self.line, self.column)

    def after_codegen(self, node: Any) -> None:
        if type(node) in _NO_SYNTACTIC_POSITION:
            key, start = self._open.pop()
            self.ranges.setdefault(key, (start, (self.line, self.column)))

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.add_token(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        if "\n" in value or "\r" in value:
            lines = value.replace("\r\n", "\n").replace("\r", "\n").split("\n")
            self.line += len(lines) - 1
            self.column = len(lines[-1])
        else:
            self.column += len(value)

    def record_syntactic_position(self, node: Any, *, start_node: Any = None, end_node: Any = None) -> _Recorder:  # type: ignore[override]
        return _Recorder(self, node, start_node, end_node)


class Positions:
    """1-based line / 1-based column ranges of the nodes of one module (end exclusive)."""

    def __init__(self, module: cst.Module) -> None:
        state = _PositionState(default_indent=module.default_indent, default_newline=module.default_newline)
        module._codegen(state)
        # Keep the nodes alive through the module; ids are stable while it lives.
        self._module = module
        self._ranges = state.ranges
        self._parens = state.paren_starts

    def has(self, node: cst.CSTNode) -> bool:
        return id(node) in self._ranges

    def span(self, node: cst.CSTNode) -> tuple[int, int, int, int]:
        """(line, column, end_line, end_column), all 1-based, end exclusive; a parenthesized
        expression spans its parentheses."""
        (l1, c1), (l2, c2) = self._ranges[id(node)]
        if id(node) in self._parens:
            l1, c1 = self._parens[id(node)]
            depth = len(getattr(node, "rpar", ()))
            c2 += depth  # `)` directly after the expression (whitespace inside parens is rare)
        return l1, c1 + 1, l2, c2 + 1

    def start(self, node: cst.CSTNode) -> tuple[int, int]:
        line, col, _, _ = self.span(node)
        return line, col

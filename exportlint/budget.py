"""The per-file budget (README: "Per-file budget"): what one file may cost the analysis.

* Python's own parser decides what is valid: a file it rejects, also for nesting too deep
  (``RecursionError`` / ``MemoryError`` in CPython's parser), is EXL900 at once.
* A file beyond the budget is not analyzed, and EXL902 says which bound it exceeds: more than
  :data:`MAX_NODES` syntax nodes, a top-level class or function of more than
  :data:`MAX_DEFINITION_NODES`, or an expression nested deeper than
  :data:`MAX_EXPRESSION_DEPTH` (libcst's parse time grows with the square of a chain's length).
  The bounds count syntax, not seconds: the same file gives the same output on any machine.
* What is within the budget is analyzed on one long-lived thread with a deep stack
  (:data:`STACK_BYTES`) and a high recursion limit (:data:`RECURSION_LIMIT`): libcst nests
  some flat syntax (``a and b and ...``, implicit string concatenation) that Python's tree does
  not, so no bound on the tree alone would keep the usual stack safe.
* The analysis itself is bounded by ``dataflow.MAX_DEPTH`` / ``MAX_CONTEXTS`` /
  ``MAX_ANALYSES`` / ``MAX_LOOP_ROUNDS`` (calls followed, contexts, analyses, loop rounds).
"""

from __future__ import annotations

import ast
import io
import os
import queue
import sys
import threading
from dataclasses import dataclass
from typing import Callable, Iterator, TypeVar

T = TypeVar("T")

STACK_BYTES = 512 * 1024 * 1024  # virtual; only the pages a deep file touches are used
RECURSION_LIMIT = 60_000
MAX_NODES = 400_000  # the largest of 3,349 timm / transformers / torchvision files has 20,724
MAX_DEFINITION_NODES = 60_000  # the largest class or function there has 15,605
MAX_EXPRESSION_DEPTH = 600  # real code there: at most 20; libcst's parse time grows with its square

_lock = threading.Lock()
_active = 0
_saved_limit = 0
_worker: "tuple[int, threading.Thread, queue.SimpleQueue] | None" = None  # per process (fork)


def _after_fork_in_child() -> None:
    """A forked worker (the CLI's process pool) starts with a fresh lock and no analysis thread: the
    parent's lock may have been held by its own analysis thread at the moment of the fork, and that
    thread does not exist in the child (a CI run hung there)."""
    global _lock, _active, _worker
    _lock = threading.Lock()
    _active = 0
    _worker = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _raise_limit() -> None:
    global _active, _saved_limit
    with _lock:
        if _active == 0:
            _saved_limit = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_saved_limit, RECURSION_LIMIT))
        _active += 1


def _restore_limit() -> None:
    global _active
    with _lock:
        _active -= 1
        if _active == 0:
            sys.setrecursionlimit(_saved_limit)


def _serve(jobs: queue.SimpleQueue) -> None:
    while True:
        fn, args, box, done = jobs.get()
        _raise_limit()
        try:
            box.append((True, fn(*args)))
        except BaseException as e:  # re-raised in the caller
            box.append((False, e))
        finally:
            _restore_limit()
            done.set()


def _deep_thread() -> "tuple[int, threading.Thread, queue.SimpleQueue]":
    """This process's analysis thread (started on first use; a forked child starts its own)."""
    global _worker
    with _lock:
        if _worker is None or _worker[0] != os.getpid() or not _worker[1].is_alive():
            jobs: queue.SimpleQueue = queue.SimpleQueue()
            previous = threading.stack_size()
            threading.stack_size(STACK_BYTES)
            try:
                thread = threading.Thread(target=_serve, args=(jobs,), name="exportlint-analysis", daemon=True)
                thread.start()
            finally:
                threading.stack_size(previous)
            _worker = (os.getpid(), thread, jobs)
        return _worker


def call_deep(fn: Callable[..., T], *args: object) -> T:
    """``fn(*args)`` on this process's analysis thread, which has a deep stack and runs with a
    high recursion limit; its result or its exception.  Calls from several threads take turns.
    The interpreter's limit is global: it is raised only while the analysis thread works (the
    caller only waits meanwhile)."""
    _, thread, jobs = _deep_thread()
    if threading.current_thread() is thread:
        return fn(*args)
    box: list = []
    done = threading.Event()
    jobs.put((fn, args, box, done))
    while not done.wait(1.0):
        if not thread.is_alive():  # never wait on a thread that is gone
            raise RuntimeError("the analysis thread stopped")
    ok, value = box[0]
    if ok:
        return value
    raise value


@dataclass
class Size:
    """What the budget looks at in a file's syntax tree."""

    nodes: int = 0
    expression_depth: int = 0  # longest chain of expressions nested in expressions
    depth_line: int = 1
    definition: str = ""  # the largest top-level class or function, its line and node count
    definition_line: int = 1
    definition_nodes: int = 0


def measure(tree: ast.Module) -> Size:
    """Node counts and expression depth of ``tree``, without recursion (``Load`` / ``Store`` markers are
    not counted)."""
    size = Size()
    deepest: ast.AST = tree
    for top in tree.body:
        count = 0
        for node, depth in _nesting(top):
            count += 1
            if depth > size.expression_depth:
                size.expression_depth, deepest = depth, node
        size.nodes += count
        if isinstance(top, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and count > size.definition_nodes:
            size.definition, size.definition_line, size.definition_nodes = top.name, top.lineno, count
    size.depth_line = getattr(deepest, "lineno", 1)
    return size


# An upper bound of the syntax nodes per byte of source: `~~~x` makes two (the operation and its operator)
# per character, nothing makes more.  An expression nests at most one level per byte of its text.
_NODES_PER_BYTE = 2


def clearly_within(tree: ast.Module, text: str) -> bool:
    """Does ``tree`` fit the budget, shown from the byte spans of its definitions and top expressions
    alone (a walk of the statements, not of every expression node: :func:`measure` costs about a tenth
    of a large model file's analysis)?  False means "not shown": :func:`measure` decides."""
    ascii_only = text.isascii()
    starts = [0]
    for line in text.splitlines(keepends=True):  # positions' columns count UTF-8 bytes
        starts.append(starts[-1] + (len(line) if ascii_only else len(line.encode("utf-8", "surrogatepass"))))
    if starts[-1] * _NODES_PER_BYTE > MAX_NODES:
        return False

    def span(node: ast.AST) -> int:
        return starts[node.end_lineno - 1] + node.end_col_offset - starts[node.lineno - 1] - node.col_offset  # type: ignore[attr-defined]

    deep = MAX_EXPRESSION_DEPTH // 2  # margin: spans of expressions longer than this are measured
    stack: list[ast.AST] = []
    for top in tree.body:
        if isinstance(top, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and span(top) * _NODES_PER_BYTE > MAX_DEFINITION_NODES:
            return False
        stack.append(top)
    context = ast.expr_context
    while stack:
        node = stack.pop()
        if isinstance(node, ast.expr):
            if span(node) > deep and _depth(node) > MAX_EXPRESSION_DEPTH:
                return False
            continue
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, context):
                stack.append(child)
    return True


def _depth(root: ast.expr) -> int:
    """How deeply expressions nest in ``root`` (``root`` itself is level 0, as in :func:`measure`)."""
    return max(depth for _, depth in _nesting(root))


def _nesting(root: ast.AST) -> Iterator[tuple[ast.AST, int]]:
    """Every node under ``root`` (``root`` included; not the ``Load`` / ``Store`` markers) with the number
    of expressions it is nested in, counted from the nearest statement, without recursion."""
    expr, context, children = ast.expr, ast.expr_context, ast.iter_child_nodes
    stack: list[tuple[ast.AST, int]] = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        yield node, depth
        inner = depth + 1 if isinstance(node, expr) else 0
        stack.extend((c, inner) for c in children(node) if not isinstance(c, context))


def over_budget(size: Size) -> tuple[int, str] | None:
    """(line, reason) when a file of this size is not analyzed; None within the budget."""
    if size.nodes > MAX_NODES:
        return 1, f"the file has {size.nodes:,} syntax nodes (budget: {MAX_NODES:,})"
    if size.definition_nodes > MAX_DEFINITION_NODES:
        return size.definition_line, (
            f"{size.definition} has {size.definition_nodes:,} syntax nodes "
            f"(budget: {MAX_DEFINITION_NODES:,} per class or function)"
        )
    if size.expression_depth > MAX_EXPRESSION_DEPTH:
        return size.depth_line, (
            f"an expression nests {size.expression_depth:,} levels deep (budget: {MAX_EXPRESSION_DEPTH:,}; "
            "a + a + ... or x[0][0]... counts one level per link, x.f().f()... two per call)"
        )
    return None


def leading_form_feeds(text: str) -> tuple[str, dict[int, int]]:
    """``text`` with the form feeds in the indentation of its lines removed the way Python's
    tokenizer reads them (a form feed resets the indentation count: only what follows the last
    one counts), and line -> characters removed there.  libcst rejects some of these valid
    lines ("no matching outer block"); the removed count puts columns back where they were.
    (A line of a multi-line string that starts with a form feed loses it too: string contents
    do not matter to the analysis.)"""
    if "\f" not in text:
        return text, {}
    shifts: dict[int, int] = {}
    lines = io.StringIO(text, newline="").readlines()  # not str.splitlines: \f ends a line there
    for number, line in enumerate(lines, start=1):
        body = line.lstrip(" \t\f")
        indent = line[: len(line) - len(body)]
        cut = indent.rfind("\f") + 1
        if cut:
            lines[number - 1] = line[cut:]
            shifts[number] = cut
    return "".join(lines), shifts

"""The concrete syntax (libcst) of one document version, parsed lazily and once.

Analysis runs on `ast`; fixes need libcst so that comments, blank lines, quoting and
indentation survive.  Parsing a whole file with libcst is slow (about 300 ms per
1,000 lines here), and one half-typed line would make the whole file unparsable, so
the source is cut into *groups* of top-level statements (a top-level statement with
its decorators, or several that share a line) and each group is parsed only when a
fix needs it, at most once per document version: the `ConcreteSource` is cached on the
`Analysis` (`concrete_source`).

Each parsed group pairs its `ast` statements with their libcst nodes by walking both
trees side by side (same statements, same order), and finds a call by its rank among
the calls of its statement in source order, checked against the source text.  When
anything does not line up, the lookup answers None and no fix is offered.
"""
from __future__ import annotations

import ast
import re
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from torch_lsp.codeactions.edits import without_leading_form_feeds
from torch_lsp.fact_cache import FactKey
from torch_lsp.text import LINE_BREAK, LineIndex

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis

_SIMPLE = {
    ast.Expr: cst.Expr, ast.Assign: cst.Assign, ast.AugAssign: cst.AugAssign, ast.AnnAssign: cst.AnnAssign,
    ast.Return: cst.Return, ast.Pass: cst.Pass, ast.Break: cst.Break, ast.Continue: cst.Continue,
    ast.Delete: cst.Del, ast.Raise: cst.Raise, ast.Assert: cst.Assert, ast.Import: cst.Import,
    ast.ImportFrom: cst.ImportFrom, ast.Global: cst.Global, ast.Nonlocal: cst.Nonlocal,
}
_COMPOUND = {
    ast.If: cst.If, ast.For: cst.For, ast.AsyncFor: cst.For, ast.While: cst.While, ast.With: cst.With,
    ast.AsyncWith: cst.With, ast.Try: cst.Try, ast.FunctionDef: cst.FunctionDef,
    ast.AsyncFunctionDef: cst.FunctionDef, ast.ClassDef: cst.ClassDef, ast.Match: cst.Match,
}
if hasattr(ast, "TryStar"):
    _COMPOUND[ast.TryStar] = cst.TryStar
_WHITESPACE = re.compile(r"\s+")


class Mismatch(Exception):
    """The ast and libcst trees of a group do not line up."""


@dataclass(eq=False)
class StatementRef:
    """Where one `ast` statement lives in its group's libcst tree.

    `node` is a small statement (`cst.Expr`, `cst.Assign`, ...) or a compound statement;
    `line` the `SimpleStatementLine` / `SimpleStatementSuite` holding a small statement;
    `block` the node whose `.body` holds the statement's line (or the compound statement)
    at `index`, and `small_index` the statement's place in its line.
    """

    group: "ParsedGroup"
    node: cst.CSTNode
    line: cst.CSTNode | None
    block: cst.CSTNode | None  # None for a statement of `if c: a; b` (a one-line suite)
    index: int
    small_index: int

    @property
    def unit(self) -> cst.CSTNode | None:
        """The node that owns whole lines: the compound statement, or the statement's line when
        it holds nothing else.  None for one statement of `a; b` or of `if c: a`."""
        if self.line is None:
            return self.node
        if isinstance(self.line, cst.SimpleStatementLine) and len(self.line.body) == 1:
            return self.line
        return None


@dataclass(eq=False)
class ParsedGroup:
    index: int
    start: int  # character offset of the group's first line
    text: str
    module: cst.Module
    indent: str  # indentation unit for new blocks
    newline: str  # line break for new lines
    statements: dict[int, StatementRef] = field(default_factory=dict)  # id(ast stmt) -> ref


class ConcreteSource:
    """libcst trees of one document version, group by group, parsed on first use."""

    def __init__(self, analysis: "Analysis") -> None:
        # Weak: the analysis caches this object, and a strong link back would make each
        # version a reference cycle that only a full garbage collection frees.
        self._analysis = weakref.ref(analysis)
        self.text = analysis.source
        self.positions = LineIndex(self.text)
        self.newline = _first_newline(self.text)
        self.indent = _file_indent(analysis)
        self.groups = _groups(analysis.tree.body)
        self._group_of: dict[int, int] = {id(s): i for i, group in enumerate(self.groups) for s in group}
        self._parsed: dict[int, ParsedGroup | None] = {}

    # -------------------------------------------------------------- statements
    def statement(self, stmt: ast.stmt) -> StatementRef | None:
        """The libcst side of an `ast` statement, or None when its group does not parse."""
        group = self.group_of(stmt)
        return group.statements.get(id(stmt)) if group is not None else None

    def group_of(self, node: ast.AST) -> ParsedGroup | None:
        top = self.top_level(node)
        index = self._group_of.get(id(top)) if top is not None else None
        return self.parsed(index) if index is not None else None

    def top_level(self, node: ast.AST) -> ast.stmt | None:
        parents = self.analysis.parents
        while node in parents:
            node = parents[node]
        return node if isinstance(node, ast.stmt) else None

    def parsed(self, index: int) -> ParsedGroup | None:
        if index not in self._parsed:
            self._parsed[index] = self._parse(index)
        return self._parsed[index]

    def _parse(self, index: int) -> ParsedGroup | None:
        statements = self.groups[index]
        first = min(_first_line(s) for s in statements)
        last = max(s.end_lineno for s in statements)
        start = self.positions.line_start(first)
        text = self.text[start:self.positions.line_start(last + 1)]
        try:
            # libcst cannot tokenize some form feeds in indentation (Python ignores them);
            # `diff_edits` keeps them where they are in `text`.
            module = cst.parse_module(without_leading_form_feeds(text))
        except Exception:  # noqa: BLE001 - half-typed code: no fixes in this group
            return None
        has_block = any(_has_indented_block(s) for s in statements)
        group = ParsedGroup(
            index, start, text, module,
            indent=module.default_indent if has_block else self.indent,
            newline=module.default_newline if LINE_BREAK.search(text) else self.newline,
        )
        try:
            _pair_block(group, statements, module)
        except Mismatch:
            return None
        return group

    # ------------------------------------------------------------------- calls
    def call(self, call: ast.Call) -> tuple[StatementRef, cst.Call] | None:
        """The libcst node of an `ast` call, with the statement holding it."""
        stmt = self.analysis.statement_of(call)
        ref = self.statement(stmt) if stmt is not None else None
        if ref is None:
            return None
        ast_calls = sorted(
            (c for c in _header_calls(stmt) if isinstance(c, ast.Call)),
            key=lambda c: (c.lineno, c.col_offset, -c.end_lineno, -c.end_col_offset),
        )
        cst_calls = _CallCollector.collect(ref.node)
        if len(ast_calls) != len(cst_calls) or call not in ast_calls:
            return None
        found = cst_calls[ast_calls.index(call)]
        if _squeezed(ref.group.module.code_for_node(found.with_changes(lpar=(), rpar=()))) != _squeezed(
            self.segment(call)
        ):
            return None
        return ref, found

    @property
    def analysis(self) -> "Analysis":
        return self._analysis()

    def segment(self, node: ast.AST) -> str:
        """Source text of an `ast` node."""
        start = self.positions.offset_of_ast(node.lineno, node.col_offset)
        end = self.positions.offset_of_ast(node.end_lineno, node.end_col_offset)
        return self.text[start:end]


_CONCRETE_SOURCE: FactKey[ConcreteSource] = FactKey("libcst tree of fixes")


def concrete_source(analysis: "Analysis") -> ConcreteSource:
    """The `ConcreteSource` of this analysis (one per document version)."""
    return analysis.facts.get_or_compute(_CONCRETE_SOURCE, lambda: ConcreteSource(analysis))


# ------------------------------------------------------------------ grouping
def _first_line(stmt: ast.stmt) -> int:
    decorators = getattr(stmt, "decorator_list", None) or []
    return min([stmt.lineno, *(d.lineno for d in decorators)])


def _groups(body: list[ast.stmt]) -> list[list[ast.stmt]]:
    """Top-level statements, joined when they share a line (`import os; import sys`)."""
    groups: list[list[ast.stmt]] = []
    for stmt in body:
        if groups and _first_line(stmt) <= groups[-1][-1].end_lineno:
            groups[-1].append(stmt)
        else:
            groups.append([stmt])
    return groups


def _first_newline(text: str) -> str:
    match = LINE_BREAK.search(text)
    return match.group(0) if match else "\n"


def _has_indented_block(stmt: ast.stmt) -> bool:
    for node in ast.walk(stmt):
        body = getattr(node, "body", None)
        if isinstance(node, ast.stmt) and isinstance(body, list) and body and body[0].lineno > node.lineno:
            return True
    return False


def _file_indent(analysis: "Analysis") -> str:
    """The indentation unit of the file's first indented block (libcst's rule), else 4 spaces."""
    lines = analysis.lines
    for stmt in analysis.statements:
        body = getattr(stmt, "body", None)
        if not isinstance(body, list) or not body or body[0].lineno <= stmt.lineno:
            continue
        outer = _indentation(lines.line_text(stmt.lineno))
        inner = _indentation(lines.line_text(body[0].lineno))
        if inner.startswith(outer) and len(inner) > len(outer):
            return inner[len(outer):]
        return "    "
    return "    "


def _indentation(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


# ------------------------------------------------------------------- pairing
def _pair_block(group: ParsedGroup, ast_body: list[ast.stmt], container) -> None:
    """Pair the statements of one block; `container` is a Module, an IndentedBlock or a one-line suite."""
    flat: list[tuple] = []  # (node, line, block, index, small_index)
    if isinstance(container, cst.SimpleStatementSuite):
        flat = [(small, container, None, -1, k) for k, small in enumerate(container.body)]
    else:
        for index, statement in enumerate(container.body):
            if isinstance(statement, cst.SimpleStatementLine):
                flat.extend((small, statement, container, index, k) for k, small in enumerate(statement.body))
            else:
                flat.append((statement, None, container, index, 0))
    if len(flat) != len(ast_body):
        raise Mismatch
    for stmt, (node, line, block, index, small_index) in zip(ast_body, flat):
        expected = _SIMPLE.get(type(stmt)) or _COMPOUND.get(type(stmt))
        if expected is None or not isinstance(node, expected):
            raise Mismatch
        group.statements[id(stmt)] = StatementRef(group, node, line, block, index, small_index)
        _pair_children(group, stmt, node)


def _pair_children(group: ParsedGroup, stmt: ast.stmt, node: cst.CSTNode) -> None:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.With, ast.AsyncWith)):
        _pair_block(group, stmt.body, node.body)
    elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
        _pair_block(group, stmt.body, node.body)
        _pair_else(group, stmt.orelse, node.orelse)
    elif isinstance(stmt, ast.If):
        _pair_block(group, stmt.body, node.body)
        if isinstance(node.orelse, cst.If):  # elif: an If inside the else branch
            if len(stmt.orelse) != 1 or not isinstance(stmt.orelse[0], ast.If):
                raise Mismatch
            group.statements[id(stmt.orelse[0])] = StatementRef(group, node.orelse, None, None, -1, 0)
            _pair_children(group, stmt.orelse[0], node.orelse)
        else:
            _pair_else(group, stmt.orelse, node.orelse)
    elif isinstance(stmt, ast.Match):
        if len(stmt.cases) != len(node.cases):
            raise Mismatch
        for case, cst_case in zip(stmt.cases, node.cases):
            _pair_block(group, case.body, cst_case.body)
    elif isinstance(stmt, ast.stmt) and hasattr(stmt, "handlers"):  # try / try*
        _pair_block(group, stmt.body, node.body)
        if len(stmt.handlers) != len(node.handlers):
            raise Mismatch
        for handler, cst_handler in zip(stmt.handlers, node.handlers):
            _pair_block(group, handler.body, cst_handler.body)
        _pair_else(group, stmt.orelse, node.orelse)
        _pair_else(group, stmt.finalbody, node.finalbody)


def _pair_else(group: ParsedGroup, ast_body: list[ast.stmt], clause) -> None:
    if clause is None:
        if ast_body:
            raise Mismatch
        return
    _pair_block(group, ast_body, clause.body)


# --------------------------------------------------------------------- calls
def _header_calls(stmt: ast.stmt) -> list[ast.AST]:
    """Every node of a statement except those of nested statement bodies."""
    found = []
    stack: list[ast.AST] = [stmt]
    while stack:
        node = stack.pop()
        found.append(node)
        for name, value in ast.iter_fields(node):
            if name in ("body", "orelse", "finalbody", "handlers", "cases") and node is stmt:
                continue
            if isinstance(value, list):
                stack.extend(v for v in value if isinstance(v, ast.AST) and not isinstance(v, ast.stmt))
            elif isinstance(value, ast.AST) and not isinstance(value, ast.stmt):
                stack.append(value)
    return found


class _CallCollector(cst.CSTVisitor):
    """Calls of one statement in source order, not descending into nested blocks."""

    def __init__(self, root: cst.CSTNode) -> None:
        self.root = root
        self.calls: list[cst.Call] = []

    @classmethod
    def collect(cls, node: cst.CSTNode) -> list[cst.Call]:
        collector = cls(node)
        node.visit(collector)
        return collector.calls

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(node)

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> bool:
        return False

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> bool:
        return False

    def visit_If(self, node: cst.If) -> bool:
        return node is self.root  # a nested `If` is an `elif`: another ast statement

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> bool:
        return False

    def visit_ExceptStarHandler(self, node: cst.ExceptStarHandler) -> bool:
        return False

    def visit_MatchCase(self, node: cst.MatchCase) -> bool:
        return False


def _squeezed(text: str) -> str:
    return _WHITESPACE.sub("", text)

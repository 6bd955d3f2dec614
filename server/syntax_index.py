"""Every node of an analysed version, grouped by type, without walking the tree again.

`Analysis` already visits every statement and every expression node once, recording each
node's parent (`analysis.parents`) as it goes.  Rules and facts that need "every
`Attribute` in the file" or "the parent of this node" used to call `ast.walk` over the
whole tree for it (one full walk each, the costliest part of checking a big file); they
ask `syntax_index(analysis)` instead, which reuses what that walk reached:

  * the statements (`analysis.statements`);
  * every other node the walk gave a parent: expressions, `arguments`, `arg`, `keyword`,
    `alias`, `withitem`, `comprehension`, except handlers, match cases;
  * and the one part the walk leaves out, the patterns and guards of `match` cases,
    walked here (rare in PyTorch code);
  * and the parents `analysis.parents` does not record: inside match cases, and of the
    statements in an `except` block (whose parent is the handler, not a statement).

So the index holds every node `ast.walk(analysis.tree)` yields except the `Module` and the
shared singletons (`Load()`, `Store()`, operators such as `Add()`), which no rule asks for
(tests/test_syntax_index.py checks this against `ast.walk`).  Each top-level statement is
indexed once and its index kept with it across versions (`analysis.statement_facts`); a
version merges them per type on first use (`analysis.facts`).
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, TypeVar

from torch_lsp.fact_cache import FactKey
from torch_lsp.statement_walk import TRY_NODES

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.statement_walk import WalkParts

N = TypeVar("N", bound=ast.AST)


class SyntaxIndex:
    """The nodes of one version by type, and the parent of each node.

    Merged from the index of each top-level statement (`StatementIndex`, kept across
    versions with the statement), one type at a time, on first use: a rule asks for a few
    types, and an edit re-indexes only the statements it touched."""

    def __init__(self, analysis: "Analysis") -> None:
        self._parents = analysis.parents
        parts = {id(statement): part for statement, part in zip(analysis.tree.body, analysis.walk_parts)}
        self._statements = analysis.statement_facts.each(
            _STATEMENT_INDEX, lambda statement: StatementIndex(statement, parts[id(statement)]))
        self._by_type: dict[type, list[ast.AST]] = {}
        self._other_parents: dict[ast.AST, ast.AST] | None = None
        self._attributes_by_name: dict[str, list[ast.Attribute]] | None = None
        self._names: dict[str, list[ast.Name]] = {}
        self._body = analysis.tree.body
        self._positions: dict[int, int] | None = None

    def of_type(self, kind: type[N]) -> list[N]:
        """Every node of exactly this type (not subclasses): statements in source order,
        other nodes in no particular order."""
        found = self._by_type.get(kind)
        if found is None:
            found = []
            if issubclass(kind, ast.stmt):
                for statement in self._statements:
                    found.extend(statement.statements.get(kind, ()))
            else:
                for statement in self._statements:
                    found.extend(statement.in_patterns.get(kind, ()))
                for statement in self._statements:
                    found.extend(statement.others.get(kind, ()))
                if issubclass(kind, _SINGLETONS):
                    found = list(dict.fromkeys(found))  # one shared `Add()` is a child of many nodes
            self._by_type[kind] = found
        return found  # type: ignore[return-value]

    def of_statement(self, statement: ast.stmt) -> "StatementIndex":
        """The index of the top-level `statement`, kept with it across versions."""
        if self._positions is None:
            self._positions = {id(each): position for position, each in enumerate(self._body)}
        return self._statements[self._positions[id(statement)]]

    def attributes_named(self, attr: str) -> list[ast.Attribute]:
        """Every `<x>.<attr>` (read, assigned or deleted), in no particular order."""
        if self._attributes_by_name is None:
            table: dict[str, list[ast.Attribute]] = {}
            for node in self.of_type(ast.Attribute):
                table.setdefault(node.attr, []).append(node)
            self._attributes_by_name = table
        return self._attributes_by_name.get(attr, [])

    def names(self, identifier: str) -> list[ast.Name]:
        """Every `Name` node spelling `identifier` (read, bound or deleted), in no particular
        order: one look-up per top-level statement, not a walk of the file."""
        found = self._names.get(identifier)
        if found is None:
            found = self._names[identifier] = []
            for statement in self._statements:
                found.extend(statement.names_by_id().get(identifier, ()))
        return found

    def names_in(self, identifier: str, scope: ast.AST) -> list[ast.Name]:
        """`names(identifier)` below `scope` (a node of this tree; the `Module`: all of them)."""
        found = self.names(identifier)
        if isinstance(scope, ast.Module):
            return found
        # A node's descendants lie within its lines (a `def`'s decorators above its own line):
        # the names outside them are left out before the walk up their parents.
        first = min([scope.lineno, *(d.lineno for d in getattr(scope, "decorator_list", ()))])
        last = scope.end_lineno
        return [name for name in found if first <= name.lineno <= last and self.encloses(scope, name)]

    def encloses(self, ancestor: ast.AST, node: ast.AST) -> bool:
        """`node` lies below `ancestor` (through `parent_of`, which reaches every node)."""
        parent = self.parent_of(node)
        while parent is not None:
            if parent is ancestor:
                return True
            parent = self.parent_of(parent)
        return False

    def parent_of(self, node: ast.AST) -> ast.AST | None:
        """The node `node` is a direct child of; None for a top-level statement."""
        parent = self._parents.get(node)
        if parent is not None:
            return parent
        if self._other_parents is None:
            self._other_parents = {}
            for statement in self._statements:
                self._other_parents.update(statement.other_parents)
        return self._other_parents.get(node)


# Node types whose instances are shared by the whole tree (the parser makes one of each).
_SINGLETONS = (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)


class StatementIndex:
    """The nodes of one top-level statement by type: its statements (in the analysis walk's
    order), the nodes of match patterns and guards (which the walk leaves out), and every
    other node the walk gave a parent; and the parents `analysis.parents` lacks: of the
    statements of an except handler's or a match case's body (their parent is no
    statement), and of the nodes inside match patterns and guards."""

    __slots__ = ("_names_by_id", "in_patterns", "other_parents", "others", "statements")

    def __init__(self, statement: ast.stmt, parts: "WalkParts") -> None:
        self.statements: dict[type, list[ast.AST]] = {}
        self.in_patterns: dict[type, list[ast.AST]] = {}
        self.others: dict[type, list[ast.AST]] = {}
        self.other_parents: dict[ast.AST, ast.AST] = {}
        for stmt in parts.statements:
            self.statements.setdefault(type(stmt), []).append(stmt)
            if type(stmt) is ast.Match:
                self._index_match_cases(stmt)
            elif isinstance(stmt, TRY_NODES):
                for handler in stmt.handlers:
                    for child in handler.body:
                        self.other_parents[child] = handler
        others = self.others
        for node in parts.parents:
            if not isinstance(node, ast.stmt):  # statements are indexed above
                others.setdefault(type(node), []).append(node)
        self._names_by_id: dict[str, list[ast.Name]] | None = None

    def nodes(self, kind: type[N]) -> list[N]:
        """The statement's nodes of exactly this type, the statement itself included."""
        if issubclass(kind, ast.stmt):
            return self.statements.get(kind, [])  # type: ignore[return-value]
        return [*self.in_patterns.get(kind, ()), *self.others.get(kind, ())]  # type: ignore[list-item]

    def by_type(self) -> dict[type, list[ast.AST]]:
        """Every node of the statement by type (the statement itself included)."""
        merged: dict[type, list[ast.AST]] = dict(self.statements)
        for table in (self.in_patterns, self.others):
            for kind, nodes in table.items():
                merged[kind] = [*merged[kind], *nodes] if kind in merged else nodes
        return merged

    def names_by_id(self) -> dict[str, list[ast.Name]]:
        """The statement's `Name` nodes by identifier, made on first use."""
        if self._names_by_id is None:
            table: dict[str, list[ast.Name]] = {}
            for node in (*self.in_patterns.get(ast.Name, ()), *self.others.get(ast.Name, ())):
                table.setdefault(node.id, []).append(node)
            self._names_by_id = table
        return self._names_by_id

    def _index_match_cases(self, stmt: ast.Match) -> None:
        match_parents = self.other_parents
        for case in stmt.cases:
            for child in case.body:
                match_parents[child] = case
            for root in (case.pattern, case.guard):
                if root is None:
                    continue
                match_parents[root] = case
                for node in ast.walk(root):
                    if isinstance(node, ast.expr_context):
                        continue
                    self.in_patterns.setdefault(type(node), []).append(node)
                    for child in ast.iter_child_nodes(node):
                        match_parents[child] = node


_STATEMENT_INDEX: FactKey[StatementIndex] = FactKey("syntax_index.statement_index")


_INDEX: FactKey[SyntaxIndex] = FactKey("syntax_index")


def syntax_index(analysis: "Analysis") -> SyntaxIndex:
    """The index of `analysis`'s tree, built on first use."""
    return analysis.facts.get_or_compute(_INDEX, lambda: SyntaxIndex(analysis))


def statement_nodes(analysis: "Analysis", statement: ast.stmt) -> dict[type, list[ast.AST]]:
    """Every node of one top-level statement by type, in no particular order: read from the
    index (`StatementIndex`), which the analysis walk filled, by the per-statement facts
    (`analysis.statement_facts`: the name scan, TL702's uses) that this version computes for
    the statement.  A walk of the statement's nodes instead costs as much as parsing it."""
    return syntax_index(analysis).of_statement(statement).by_type()

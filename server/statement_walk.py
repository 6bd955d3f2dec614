"""The part of the analysis walk that one top-level statement's nodes decide alone.

`Analysis` walks every statement and every expression node of a version once: it records
each node's parent, and the context (function, loops, autograd mode, guards) of every
statement and call.  The contexts depend on the rest of the file (what the imports bind,
the project's grad-off wrappers) and on objects made per version (`FunctionInfo`,
`LoopInfo`); the parents, and which calls sit under which statement header, do not: they
are a pure function of the statement's subtree.  That part is computed here, once per
top-level statement object (`StatementFacts`), so a version parsed as an edit of the
previous one walks the expressions of the statements the edit touched only; the
statements' own walk, which hands out the contexts, stays per version and cheap.

`walk_parts` visits the nodes in exactly the order the live walk of `Analysis` used to,
so merging the parts statement by statement (`dict.update`) gives the same `parents`
mapping, entry order included, as one walk of the whole file.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from torch_lsp import memos

FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef)
LOOP_NODES = (ast.For, ast.AsyncFor, ast.While)
TRY_NODES = (ast.Try, getattr(ast, "TryStar", ast.Try))
BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")

_SKIPPED_NODES = (ast.stmt, ast.expr_context)
# Fields that never hold a node worth a parent: names, markers, and the operator
# singletons (one shared `ast.Add()` for the whole tree, so its parent means nothing).
_NOT_EXPRESSION_FIELDS = frozenset({
    "ctx", "id", "attr", "arg", "kind", "type_comment", "conversion", "is_async", "level", "n", "s", "op", "ops",
    "name", "asname", "module",
})
_EXPRESSION_FIELDS: dict[type, tuple[str, ...]] = {}
memos.register(_EXPRESSION_FIELDS.clear)


@dataclass(frozen=True)
class WalkParts:
    """One top-level statement's parents (in the live walk's order), its statements (the
    walk's order), and the calls below each header it holds, by the id of the header's
    owner (a statement or an except handler), in the order the walk records them.  The
    statement keeps the owners alive, so the ids stay theirs as long as these parts are
    used with it."""

    parents: dict[ast.AST, ast.AST]
    statements: list[ast.stmt]
    calls_by_owner: dict[int, list[ast.Call]]


def walk_parts(statement: ast.stmt) -> WalkParts:
    """The parents, statements and header calls of one top-level statement's subtree."""
    parts = WalkParts({}, [], {})
    _walk_statement(statement, parts.parents, parts.calls_by_owner, parts.statements)
    return parts


def _walk_statement(stmt: ast.stmt, parents: dict[ast.AST, ast.AST], calls: dict[int, list[ast.Call]],
                    statements: list[ast.stmt]) -> None:
    statements.append(stmt)
    for name in BLOCK_FIELDS:
        for child in getattr(stmt, name, ()):
            parents[child] = stmt
    if isinstance(stmt, FUNCTION_NODES):
        _header(stmt, [*stmt.decorator_list, stmt.args], parents, calls)
        if stmt.returns is not None:
            _header(stmt, [stmt.returns], parents, calls)
        _walk_block(stmt.body, parents, calls, statements)
    elif isinstance(stmt, ast.ClassDef):
        _header(stmt, [*stmt.bases, *stmt.keywords, *stmt.decorator_list], parents, calls)
        _walk_block(stmt.body, parents, calls, statements)
    elif isinstance(stmt, LOOP_NODES):
        _header(stmt, [stmt.test] if isinstance(stmt, ast.While) else [stmt.target, stmt.iter], parents, calls)
        _walk_block(stmt.body, parents, calls, statements)
        _walk_block(stmt.orelse, parents, calls, statements)
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        _header(stmt, stmt.items, parents, calls)
        _walk_block(stmt.body, parents, calls, statements)
    elif isinstance(stmt, ast.If):
        _header(stmt, [stmt.test], parents, calls)
        _walk_block(stmt.body, parents, calls, statements)
        _walk_block(stmt.orelse, parents, calls, statements)
    elif isinstance(stmt, TRY_NODES):
        _walk_block(stmt.body, parents, calls, statements)
        for handler in stmt.handlers:
            parents.setdefault(handler, stmt)
            for child in handler.body:  # the handler is no statement: no block field of `stmt` names them
                parents[child] = handler
            if handler.type is not None:
                _header(handler, [handler.type], parents, calls)
            _walk_block(handler.body, parents, calls, statements)
        _walk_block(stmt.orelse, parents, calls, statements)
        _walk_block(stmt.finalbody, parents, calls, statements)
    elif isinstance(stmt, ast.Match):
        _header(stmt, [stmt.subject], parents, calls)
        for case in stmt.cases:
            parents.setdefault(case, stmt)
            for child in case.body:
                parents[child] = case
            _walk_block(case.body, parents, calls, statements)
    else:
        _header(stmt, _child_nodes(stmt), parents, calls)


def _walk_block(body: list[ast.stmt], parents: dict[ast.AST, ast.AST], calls: dict[int, list[ast.Call]],
                statements: list[ast.stmt]) -> None:
    for stmt in body:
        _walk_statement(stmt, parents, calls, statements)


def _header(owner: ast.AST, nodes: list, parents: dict[ast.AST, ast.AST], calls_by_owner: dict[int, list[ast.Call]]) -> None:
    """Record parents, and the calls in source order, below these header nodes.

    Iterates only the fields that can hold expression nodes (`_expression_fields`):
    several times faster than `ast.iter_child_nodes`, and this is the one pass over
    every expression node.
    """
    stack = []
    for n in nodes:
        if isinstance(n, ast.AST) and not isinstance(n, ast.stmt):
            parents[n] = owner
            stack.append(n)
    calls = []
    fields_of = _EXPRESSION_FIELDS
    while stack:
        node = stack.pop()
        kind = node.__class__
        if kind is ast.Call:
            calls.append(node)
        fields = fields_of.get(kind)
        if fields is None:
            fields = _expression_fields(kind)
        for name in fields:
            value = getattr(node, name, None)
            if type(value) is list:
                for child in value:
                    if isinstance(child, ast.AST) and not isinstance(child, ast.stmt):
                        parents[child] = node
                        stack.append(child)
            elif isinstance(value, ast.AST) and not isinstance(value, _SKIPPED_NODES):
                parents[value] = node
                stack.append(value)
    if calls:
        calls.sort(key=position)
        # A function's decorators and arguments, then its return annotation: two headers,
        # each in source order, one after the other.
        calls_by_owner.setdefault(id(owner), []).extend(calls)


def _expression_fields(kind: type) -> tuple[str, ...]:
    """The fields of an expression node type that may hold child nodes; none for a
    `Name` or a `Constant` (half of all nodes)."""
    if kind is ast.Constant:
        fields: tuple[str, ...] = ()
    else:
        fields = tuple(name for name in kind._fields if name not in _NOT_EXPRESSION_FIELDS)
    _EXPRESSION_FIELDS[kind] = fields
    return fields


def _child_nodes(node: ast.AST) -> list:
    children = []
    for name in node._fields:
        value = getattr(node, name, None)
        if type(value) is list:
            children.extend(value)
        elif isinstance(value, ast.AST):
            children.append(value)
    return children


def position(node: ast.AST) -> tuple[int, int]:
    return node.lineno, node.col_offset

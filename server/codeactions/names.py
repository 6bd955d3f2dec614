"""Which names a piece of code binds and reads: what fixes must check before moving code.

Every answer errs on the side of "bound": a name that might be rebound somewhere stops
a fix (a hoist, an inserted `zero_grad`) rather than risking a changed program.
"""
from __future__ import annotations

import ast
import builtins
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis, FunctionInfo

def bound_in(nodes: Iterable[ast.AST]) -> set[str]:
    """Names bound anywhere in these statements (not inside nested function or class bodies)."""
    names: set[str] = set()
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
        stack.extend(ast.iter_child_nodes(node))
    return names


def loaded_names(node: ast.AST) -> set[str]:
    """Every plain name read in an expression or statement."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def bound_in_loop(loop_node: ast.AST) -> set[str]:
    """Names a loop (re)binds: its target and everything its body binds."""
    parts = [*loop_node.body, *loop_node.orelse]
    if isinstance(loop_node, (ast.For, ast.AsyncFor)):
        parts.append(loop_node.target)
    return bound_in(parts)


def names_used_in(function: "FunctionInfo") -> set[str]:
    """Every name that appears in a function (for picking a fresh one)."""
    names = {n.id for n in ast.walk(function.node) if isinstance(n, ast.Name)}
    return names | set(function.params)


def fresh_name(analysis: "Analysis", function: "FunctionInfo", wanted: str) -> str:
    """`wanted`, or `wanted_2`, ... when the function (nested functions included) already uses
    it or the module imports it."""
    taken = names_used_in(function) | set(analysis.imports)
    name, counter = wanted, 2
    while name in taken:
        name, counter = f"{wanted}_{counter}", counter + 1
    return name


def contains(outer: ast.AST, inner: ast.AST) -> bool:
    """Whether `inner` lies inside `outer`'s source span."""
    return (outer.lineno, outer.col_offset) <= (inner.lineno, inner.col_offset) and (
        inner.end_lineno, inner.end_col_offset) <= (outer.end_lineno, outer.end_col_offset)


def defined_before(analysis: "Analysis", function: "FunctionInfo", name: str, line: int) -> bool:
    """`name` surely has a value at `line` of `function`: a parameter, bound earlier in the
    function, or not bound in the function at all (a global, builtin or closure variable)."""
    if name in function.params:
        return True
    bindings = [s for s in function.statements if name in bound_in([_binding_part(s)])]
    if not bindings:
        return hasattr(builtins, name) if function.is_module else True
    return any(_binds_before(s, line) for s in bindings)


def _binds_before(stmt: ast.stmt, line: int) -> bool:
    """A simple statement binds once it has run; a `for`/`with` header binds for its body."""
    if isinstance(stmt, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)):
        return stmt.lineno < line <= stmt.end_lineno
    return stmt.end_lineno < line


def _binding_part(stmt: ast.stmt) -> ast.AST:
    """The part of a statement that binds, without the bodies of compound statements (those
    are statements of their own)."""
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return stmt.target
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return ast.Tuple(elts=[i.optional_vars for i in stmt.items if i.optional_vars is not None], ctx=ast.Store())
    if isinstance(stmt, (ast.If, ast.While, ast.Try, ast.Match)) or hasattr(ast, "TryStar") and isinstance(
        stmt, getattr(ast, "TryStar")
    ):
        return ast.Pass()
    return stmt


def bound_by_statements(statements: Iterable[ast.stmt], besides: ast.stmt | None = None) -> set[str]:
    """Names bound by these statements themselves (each compound statement only by its own
    header: its body's statements are expected in the list too), skipping `besides`."""
    return bound_in([_binding_part(s) for s in statements if s is not besides])

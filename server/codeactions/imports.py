"""The local name of a module where a fix needs it (`torch`, `th`), adding `import` when none.

A binding is usable when it is visible where the new code goes: a module-level import
(also one inside a module-level `if`/`try`), or an import in an enclosing function.
A new `import torch` goes just before the file's first import (after the module
docstring and `from __future__` imports), so it joins the import block.
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.codeactions.rewrite import Rewrite

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def module_alias(analysis: "Analysis", module: str, at: ast.AST) -> str | None:
    """The name bound to `module` that code at `at` can use, or None."""
    for statements in (_module_level(analysis.tree), *_enclosing_function_bodies(analysis, at)):
        for stmt in statements:
            if isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    if alias.asname and alias.name == module:
                        return alias.asname
                    if not alias.asname and alias.name.split(".")[0] == module:
                        return module
            elif isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level and "." in module:
                parent, _, child = module.rpartition(".")
                for alias in stmt.names:
                    if stmt.module == parent and alias.name == child:
                        return alias.asname or alias.name
    return None


def use_module(rewrite: "Rewrite", module: str, at: ast.AST) -> str:
    """The name to write for `module` at `at`; schedules `import module` when there is none."""
    alias = module_alias(rewrite.analysis, module, at)
    if alias is not None:
        return alias
    anchor, where = import_anchor(rewrite.analysis)
    if anchor is None:
        from torch_lsp.codeactions.rewrite import CannotRewrite

        raise CannotRewrite("the file has no statement to put an import next to")
    if where == "before":
        rewrite.insert_before(anchor, f"import {module}\n", take_comments=False)
    else:
        rewrite.insert_after(anchor, f"import {module}\n")
    return module


def needs_import(analysis: "Analysis", module: str, at: ast.AST) -> bool:
    return module_alias(analysis, module, at) is None


def import_anchor(analysis: "Analysis") -> tuple[ast.stmt | None, str]:
    """Where `import x` goes: before the first import after the docstring and `__future__`
    imports, else after those, else before the first statement."""
    body = analysis.tree.body
    header = 0
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(
        body[0].value.value, str
    ):
        header = 1
    while header < len(body) and isinstance(body[header], ast.ImportFrom) and body[header].module == "__future__":
        header += 1
    for stmt in body[header:]:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            return stmt, "before"
    if header:
        return body[header - 1], "after"
    return (body[0], "before") if body else (None, "before")


def _module_level(tree: ast.Module) -> list[ast.stmt]:
    found, stack = [], list(tree.body)
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, _SCOPES):
            continue
        found.append(stmt)
        for name in ("body", "orelse", "finalbody"):
            stack.extend(getattr(stmt, name, ()))
        for handler in getattr(stmt, "handlers", ()):
            stack.extend(handler.body)
    return found


def _enclosing_function_bodies(analysis: "Analysis", at: ast.AST) -> list[list[ast.stmt]]:
    bodies = []
    function = analysis.context(at).function
    while function is not None and not function.is_module:
        bodies.append(function.statements)
        parent = analysis.parents.get(function.node)
        function = analysis.context(parent).function if parent is not None else None
    return bodies

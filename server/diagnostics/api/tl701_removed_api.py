"""TL701 removed-api: a use or import of a function PyTorch has removed (`torch.solve`,
`torch.symeig`, `torch.lstsq`, `torch.eig`, `torch.matrix_rank`, `torch._six`)."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator

from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.api.catalogue import REMOVED, REMOVED_METHODS, at_least, version_text
from torch_lsp.diagnostics.api.describe import advice_for, what_is_used
from torch_lsp.diagnostics.api.uses import ApiUse, api_uses
from torch_lsp.diagnostics.base import Finding, Rule
from torch_lsp.syntax_index import syntax_index

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis


@register
class RemovedApi(Rule):
    """## What it does
    Flags uses and imports of functions that PyTorch has removed: `torch.solve`,
    `torch.symeig`, `torch.eig`, `torch.lstsq`, `torch.matrix_rank` (deprecated in 1.9,
    gone from 2.0) and the `torch._six` module — also through aliases (`import torch as T;
    T.solve(...)`, `from torch import symeig as eigh`) and as tensor methods (`a.symeig()`
    where `a` is known to be a tensor).  Judged against `target-version`; on an older
    PyTorch that still has the function, TL704 reports it as deprecated instead.  Not
    flagged: a use in the body of a `try` whose `except` catches what it raises there
    (`try: from torch._six import inf` / `except ImportError: from math import inf`), a
    shim that works on every version.

    ## Why is this bad
    The line raises `AttributeError` (or `ImportError`) on the PyTorch the project runs.

    ## Example
    ```python
    solution, _ = torch.solve(b, A)
    ```

    ## Use instead
    ```python
    solution = torch.linalg.solve(A, b)
    ```
    """

    code = "TL701"
    name = "removed-api"
    severity = "error"

    def check(self, analysis: "Analysis") -> Iterator[Finding]:
        version = analysis.torch_version
        removed = {name: api for name, api in REMOVED.items() if at_least(version, api.removed_in)}
        for use in api_uses(analysis, removed, REMOVED_METHODS):
            if _caught_by_try(analysis, use):
                continue  # a compatibility shim: the error is expected and its fallback runs
            error = "ImportError" if use.kind == "import" else "AttributeError"
            yield self.finding(
                use.node,
                f"{what_is_used(analysis, use)} was removed in PyTorch {use.api.removed_in} (deprecated since "
                f"{use.api.since}), so this raises `{error}` on {version_text(version)}. Use {advice_for(use)}.",
            )



_CATCH_ALL = {"Exception", "BaseException"}


def _caught_by_try(analysis: "Analysis", use: ApiUse) -> bool:
    """`use` sits in the body of a `try` (in the same function) with a handler that catches
    the error it raises where the API is gone: `ImportError` for an import (also
    `ModuleNotFoundError` when the removed name is the module imported from, `torch._six`),
    `AttributeError` for any other use, a bare `except:` or `except Exception:`."""
    caught = set(_CATCH_ALL)
    if use.kind == "import":
        caught.add("ImportError")
        if _imports_from_removed_module(use):
            caught.add("ModuleNotFoundError")
    else:
        caught.add("AttributeError")
    parent_of = syntax_index(analysis).parent_of
    child = use.imported.stmt if use.imported is not None else use.node
    parent = parent_of(child)
    while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        if isinstance(parent, ast.Try) and any(child is stmt for stmt in parent.body) and any(
                _catches(handler, caught) for handler in parent.handlers):
            return True
        child, parent = parent, parent_of(parent)
    return False


def _imports_from_removed_module(use: ApiUse) -> bool:
    """`import torch._six`, `from torch._six import inf`: the module itself is missing."""
    stmt = use.imported.stmt
    module = stmt.module if isinstance(stmt, ast.ImportFrom) else use.imported.qualname
    return module is not None and (module == use.api.qualname or module.startswith(use.api.qualname + "."))


def _catches(handler: ast.ExceptHandler, caught: set[str]) -> bool:
    if handler.type is None:
        return True
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    names = {t.id if isinstance(t, ast.Name) else t.attr if isinstance(t, ast.Attribute) else None for t in types}
    return bool(names & caught)

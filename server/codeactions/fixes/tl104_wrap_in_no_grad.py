"""TL104: wrap the in-place change of a tensor that requires grad in `with torch.no_grad():`."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from torch_lsp.codeactions.imports import use_module
from torch_lsp.codeactions.locate import on_lines_of_its_own, statement_at
from torch_lsp.codeactions.registry import FixOffer, fixer, importing, offer
from torch_lsp.codeactions.rewrite import Rewrite

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.diagnostics.base import Finding


@fixer("TL104")
def wrap_in_no_grad(analysis: "Analysis", finding: "Finding") -> list[FixOffer]:
    stmt = statement_at(analysis, finding)
    if stmt is None or isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return []
    if not on_lines_of_its_own(analysis, stmt):
        return []

    def plan(rw: Rewrite) -> None:
        torch = use_module(rw, "torch", stmt)
        rw.wrap([stmt], f"with {torch}.no_grad()")

    title = "Wrap the statement in `with torch.no_grad():`" + importing(analysis, "torch", stmt)
    return [offer(analysis, finding, title, plan)]

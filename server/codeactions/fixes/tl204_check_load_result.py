"""TL204: bind the result of `load_state_dict(strict=False)` and report the missing and
unexpected keys (with the module's logger when it has one, else `warnings.warn`)."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from torch_lsp.codeactions.imports import use_module
from torch_lsp.codeactions.locate import call_at, on_lines_of_its_own
from torch_lsp.codeactions.names import fresh_name
from torch_lsp.codeactions.registry import FixOffer, fixer, importing, offer
from torch_lsp.codeactions.rewrite import Rewrite

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.diagnostics.base import Finding


@fixer("TL204")
def check_load_result(analysis: "Analysis", finding: "Finding") -> list[FixOffer]:
    call = call_at(analysis, finding)
    stmt = analysis.statement_of(call) if call is not None else None
    if not (isinstance(stmt, ast.Expr) and stmt.value is call) or not on_lines_of_its_own(analysis, stmt):
        return []
    function = analysis.context(stmt).function
    missing = fresh_name(analysis, function, "missing_keys")
    unexpected = fresh_name(analysis, function, "unexpected_keys")
    logger = _module_logger(analysis)

    def plan(rw: Rewrite) -> None:
        if logger is not None:
            report = (f'{logger}.warning("load_state_dict(strict=False): missing keys %s, unexpected keys %s", '
                      f"{missing}, {unexpected})")
        else:
            warnings = use_module(rw, "warnings", stmt)
            report = (f'{warnings}.warn(f"load_state_dict(strict=False): missing keys {{{missing}}}, '
                      f'unexpected keys {{{unexpected}}}")')
        ref = rw.ref(stmt)
        assign = rw.statements(ref.group, f"{missing}, {unexpected} = _\n")[0].body[0]
        rw.change_statement(stmt, lambda expr: assign.with_changes(value=expr.value))
        rw.insert_after(stmt, f"if {missing} or {unexpected}:\n    {report}\n")

    how = f"log them with `{logger}.warning`" if logger else "warn about missing and unexpected keys"
    title = f"Bind the result and {how}" + ("" if logger else importing(analysis, "warnings", stmt))
    return [offer(analysis, finding, title, plan)]


def _module_logger(analysis: "Analysis") -> str | None:
    """A module-level `log = logging.getLogger(...)`."""
    for stmt in analysis.tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            if isinstance(stmt.value, ast.Call) and analysis.call_qualname(stmt.value) == "logging.getLogger":
                return stmt.targets[0].id
    return None

"""Text edits from a plan of `ast` spans and their new text (`diagnostics.api.replacements`),
with the import the new text needs added the way `imports.use_module` adds one."""
from __future__ import annotations

from typing import TYPE_CHECKING

from torch_lsp.codeactions.edits import TextEdit
from torch_lsp.codeactions.imports import use_module
from torch_lsp.codeactions.registry import SAFE, FixOffer
from torch_lsp.codeactions.rewrite import CannotRewrite, Rewrite
from torch_lsp.diagnostics.api.replacements import AddedName

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.diagnostics.api.replacements import Plan


def plan_edits(analysis: "Analysis", plan: "Plan") -> list[TextEdit] | None:
    lines = analysis.lines
    edits = [TextEdit(lines.offset_of_ast(line, col), lines.offset_of_ast(end_line, end_col), text)
             for (line, col, end_line, end_col), text in plan.edits]
    if isinstance(plan.import_module, AddedName):
        (line, col, end_line, end_col), text = plan.import_module.at, plan.import_module.text
        edits.append(TextEdit(lines.offset_of_ast(line, col), lines.offset_of_ast(end_line, end_col), text))
    elif plan.import_module:
        rewrite = Rewrite(analysis)
        try:
            written = use_module(rewrite, plan.import_module, plan.at)
            added = rewrite.edits()
        except CannotRewrite:
            return None
        if written != plan.import_module or added is None:
            return None
        edits += added
    edits.sort(key=lambda e: (e.start, e.end))
    if any(a.end > b.start for a, b in zip(edits, edits[1:])):
        return None
    return edits


def plan_offer(analysis: "Analysis", code: str, plan: "Plan") -> FixOffer:
    """The fix of a `code` finding that carries out `plan` (its edits are made when built)."""
    return FixOffer(code, plan.title, plan.safety, lambda: plan_edits(analysis, plan), plan.safety == SAFE)

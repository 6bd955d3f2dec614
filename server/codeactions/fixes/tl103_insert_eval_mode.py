"""TL103: put the model in eval mode with `model.eval()` before the evaluation (before the
outermost loop around it that does not rebind the model)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from torch_lsp.codeactions.locate import call_at
from torch_lsp.codeactions.names import bound_in_loop
from torch_lsp.codeactions.registry import FixOffer, fixer, offer

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.diagnostics.base import Finding


@fixer("TL103", data=("model",))
def insert_eval(analysis: "Analysis", finding: "Finding") -> list[FixOffer]:
    call = call_at(analysis, finding)
    if call is None:
        return []
    model = finding.data.get("model") or analysis.roles_for(call).model_name(call)
    anchor = analysis.statement_of(call)
    if not model or anchor is None:
        return []
    where = "before this statement"
    for loop in reversed(analysis.context(call).loops):
        if model in bound_in_loop(loop.node):
            break
        anchor, where = loop.node, "before the loop"
    text = f"{model}.eval()"
    return [offer(analysis, finding, f"Insert `{text}` {where}", lambda rw: rw.insert_before(anchor, text + "\n"),
                  safety=finding.data.get("safety"))]

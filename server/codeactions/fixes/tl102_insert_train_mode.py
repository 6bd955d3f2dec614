"""TL102: put the model back in training mode with `model.train()`, at the top of the
epoch loop that also evaluates it, else just before the training loop."""
from __future__ import annotations

from typing import TYPE_CHECKING

from torch_lsp.analysis import switches_to_eval
from torch_lsp.codeactions.locate import loop_at
from torch_lsp.codeactions.names import bound_in_loop
from torch_lsp.codeactions.registry import FixOffer, fixer, offer

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis, LoopInfo
    from torch_lsp.diagnostics.base import Finding


@fixer("TL102", data=("model", "inside_epoch"))
def insert_train(analysis: "Analysis", finding: "Finding") -> list[FixOffer]:
    loop = loop_at(analysis, finding)
    model = finding.data.get("model")
    if loop is None or not model:
        return []
    text = f"{model}.train()"
    if finding.data.get("inside_loop"):  # evaluated inside this loop: back to train every iteration
        return [offer(analysis, finding, f"Insert `{text}` at the top of the loop",
                      lambda rw: rw.insert_first(loop.node, text + "\n"))]
    epoch = _evaluating_epoch_loop(analysis, loop, model) if finding.data.get("inside_epoch") else None
    if epoch is not None:
        return [offer(analysis, finding, f"Insert `{text}` at the top of the epoch loop",
                      lambda rw: rw.insert_first(epoch.node, text + "\n"))]
    return [offer(analysis, finding, f"Insert `{text}` before the loop",
                  lambda rw: rw.insert_before(loop.node, text + "\n"))]


def _evaluating_epoch_loop(analysis: "Analysis", loop: "LoopInfo", model: str) -> "LoopInfo | None":
    """The enclosing loop that evaluates `model`, when the top of its body is a right place for
    `model.train()`: every evaluation in it comes after the training loop, and it does not rebind
    the model.  Otherwise None (the statement goes just before the training loop)."""
    ancestor = loop.parent
    while ancestor is not None:
        evaluations = [c for c in ancestor.calls if switches_to_eval(analysis, c, model)]
        if evaluations:
            after = all(c.lineno > loop.node.end_lineno for c in evaluations)
            return ancestor if after and model not in bound_in_loop(ancestor.node) else None
        ancestor = ancestor.parent
    return None

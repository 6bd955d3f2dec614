"""TL107 backward-under-no-grad: flags `.backward()` called inside `torch.no_grad()` or
`torch.inference_mode()` (including a function decorated with them), unless
`torch.enable_grad()` re-enables autograd around it.
"""
from __future__ import annotations

import ast
from typing import Iterator

from torch_lsp.analysis import Analysis
from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import Finding, Rule
from torch_lsp.syntax_nodes import call_name, receiver


@register
class BackwardUnderNoGrad(Rule):
    """
    ## What it does
    Flags `.backward()` called inside `torch.no_grad()` or `torch.inference_mode()`
    (including a function decorated with them, or with a project wrapper of them such as
    `@smart_inference_mode()`, followed into the workspace), unless `torch.enable_grad()`
    re-enables autograd around it.

    ## Why is this bad
    Nothing computed under `no_grad` is recorded in the graph, so the call fails with
    "element 0 of tensors does not require grad and does not have a grad_fn".

    ## Example
    ```python
    with torch.no_grad():
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
    ```

    ## Use instead
    ```python
    loss = F.cross_entropy(model(images), labels)
    loss.backward()
    ```
    """

    code = "TL107"
    name = "backward-under-no-grad"
    severity = "error"
    fix_safety = "none"

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        for call in analysis.backward_call_list():
            if not analysis.context(call).grad_disabled:
                continue
            if not self._computed_without_grad(analysis, call):
                continue
            message = (
                f"`{ast.unparse(call)}` runs on a value computed with autograd disabled "
                f"(`torch.no_grad()`/`inference_mode()`), so there is no graph to backpropagate through and it "
                f"raises. Compute the loss outside the no-grad block (or inside `torch.enable_grad()`)."
            )
            yield self.finding(call, message)

    def _computed_without_grad(self, analysis: Analysis, call: ast.Call) -> bool:
        """The tensor being backpropagated was itself computed with autograd off.

        `loss.backward()` inside `no_grad` works when `loss` was computed before the block;
        it fails when the loss (or the expression on it) is computed under `no_grad`.
        """
        target = receiver(call)
        if call_name(call) == "manual_backward" or target is None:
            target = call.args[0] if call.args else None
        if isinstance(target, ast.Name):
            assignment = analysis.roles_for(call).last_assignment(target.id, call)
            return assignment is not None and analysis.context(assignment.statement).grad_disabled
        return isinstance(target, (ast.Call, ast.BinOp, ast.Subscript))

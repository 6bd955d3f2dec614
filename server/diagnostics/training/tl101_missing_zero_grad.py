"""TL101 missing-zero-grad: flags a training loop that calls `.backward()` and `optimizer.step()`
but never clears the gradients.
"""
from __future__ import annotations

import ast
from typing import Iterator

from torch_lsp.analysis import Analysis, LoopInfo
from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import Finding, Rule
from torch_lsp.syntax_nodes import call_name, dotted, loop_header_span, receiver


def _clears_gradients(analysis: Analysis, loop: LoopInfo) -> bool:
    """`zero_grad(...)`, `p.grad = None`, `p.grad.zero_()` in the loop or in a local helper it calls."""
    if _calls_clear(loop.calls) or _assigns_grad_none(loop.statements):
        return True
    for call in loop.calls:
        name = call_name(call)
        for function in analysis.function_named(name or ""):
            if _calls_clear(function.calls) or _assigns_grad_none(function.statements):
                return True
    return False


def _calls_clear(calls: list[ast.Call]) -> bool:
    for call in calls:
        name = call_name(call)
        if name == "zero_grad":
            return True
        if name in ("zero_", "fill_", "detach_", "requires_grad_") and isinstance(call.func, ast.Attribute):
            target = call.func.value
            if isinstance(target, ast.Attribute) and target.attr == "data":
                target = target.value
            if isinstance(target, ast.Attribute) and target.attr == "grad" and name in ("zero_", "fill_"):
                return True
    return False


def _assigns_grad_none(statements: list[ast.stmt]) -> bool:
    for stmt in statements:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant) and stmt.value.value is None:
            if any(isinstance(t, ast.Attribute) and t.attr == "grad" for t in stmt.targets):
                return True
    return False


@register
class MissingZeroGrad(Rule):
    """
    ## What it does
    Flags a training loop that calls `.backward()` and `optimizer.step()` but never clears
    the gradients.

    ## Why is this bad
    `.backward()` adds into `.grad`. Without `zero_grad()` every step uses the sum of all
    gradients so far, so updates grow and training diverges or silently degrades.
    Clearing is `optimizer.zero_grad()`, `model.zero_grad()`, `p.grad = None` or
    `p.grad.zero_()` (the manual forms may get TL407).

    ## Example
    ```python
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    ```

    ## Use instead
    ```python
    for x, y in loader:
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    ```
    """

    code = "TL101"
    name = "missing-zero-grad"
    severity = "warning"
    fix_safety = "safe"

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        for loop in analysis.innermost_training_loops:
            backward = analysis.backward_calls(loop)
            steps = analysis.optimizer_steps(loop)
            if not backward or not steps or _clears_gradients(analysis, loop):
                continue
            optimizer = _optimizer_expr(steps[0])
            message = (
                f"This training loop calls `{ast.unparse(backward[0].func)}()` and `{ast.unparse(steps[0])}` "
                f"but never clears gradients, so they accumulate across steps. "
                f"Call `{optimizer}.zero_grad(set_to_none=True)` at the start of each iteration."
            )
            yield self.finding_at(
                loop_header_span(loop.node), message,
                f"Insert `{optimizer}.zero_grad(set_to_none=True)` at the top of the loop",
                data={"optimizer": optimizer},
            )


def _optimizer_expr(step: ast.Call) -> str:
    """`optimizer` for `optimizer.step()`, and for `scaler.step(optimizer)`."""
    target = receiver(step)
    if step.args and call_name(step) == "step" and target is not None:
        name = dotted(target) or ""
        if name.split(".")[-1].lower().endswith("scaler"):
            return ast.unparse(step.args[0])
    return ast.unparse(target) if target is not None else "optimizer"

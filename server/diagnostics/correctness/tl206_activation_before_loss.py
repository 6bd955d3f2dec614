"""TL206 activation-before-loss: flags `F.cross_entropy` / `nn.CrossEntropyLoss` given the output
of `softmax` or `log_softmax`, and `F.binary_cross_entropy_with_logits` / `nn.BCEWithLogitsLoss`
given the output of `sigmoid` (directly or through a local variable).
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator

from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import Finding, Rule
from torch_lsp.diagnostics.correctness.provenance import MAX_DEPTH, torch_module_class, module_constructor, followed
from torch_lsp.diagnostics.correctness.quoting import source_of
from torch_lsp.diagnostics.correctness.torch_names import FUNCTIONAL_SOFTMAX, TORCH_SOFTMAX, SOFTMAX_MODULES
from torch_lsp.syntax_nodes import argument, has_star_args

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis


SIGMOID_FUNCTIONS = {"torch.sigmoid", "torch.nn.functional.sigmoid", "torch.special.expit"}
CROSS_ENTROPY_FUNCTIONS = {"torch.nn.functional.cross_entropy": "cross_entropy"}
LOGITS_LOSS_FUNCTIONS = {"torch.nn.functional.binary_cross_entropy_with_logits": "bce_with_logits"}
LOSS_MODULES = {"CrossEntropyLoss": "cross_entropy", "BCEWithLogitsLoss": "bce_with_logits"}
# Methods that change a tensor's shape or dtype but not what its values mean.
VALUE_KEEPING_METHODS = {
    "view", "reshape", "flatten", "squeeze", "unsqueeze", "contiguous", "float", "double", "half", "to", "permute",
    "transpose", "cpu", "cuda", "type_as",
}


@register
class ActivationBeforeLoss(Rule):
    """## What it does
    Flags `F.cross_entropy` / `nn.CrossEntropyLoss` given the output of `softmax` or
    `log_softmax`, and `F.binary_cross_entropy_with_logits` / `nn.BCEWithLogitsLoss`
    given the output of `sigmoid` (directly or through a local variable).

    ## Why is this bad
    These losses take logits and apply the activation themselves. Feeding them
    probabilities applies it twice: softmax of probabilities is nearly uniform and
    sigmoid of probabilities lies in (0.5, 0.73), so the loss barely moves and training
    stalls without any error. (`log_softmax` twice gives the same value but hides that
    the input is not logits.)

    ## Example
    ```python
    probs = torch.softmax(logits, dim=-1)
    loss = F.cross_entropy(probs, labels)
    ```

    ## Use instead
    ```python
    loss = F.cross_entropy(logits, labels)
    # or, on probabilities: F.nll_loss(torch.log(probs), labels)
    ```
    """

    code = "TL206"
    name = "activation-before-loss"
    severity = "error"
    fix_safety = "safe"

    def check(self, analysis: "Analysis") -> Iterator[Finding]:
        for call in analysis.calls:
            loss = logits_loss_kind(analysis, call)
            if loss is None or has_star_args(call):
                continue
            prediction = argument(call, 0, "input")
            found = activation_output(analysis, prediction) if prediction is not None else None
            if found is None:
                continue
            kind, activation = found
            wanted = ("softmax", "log_softmax") if loss == "cross_entropy" else ("sigmoid",)
            if kind not in wanted:
                continue
            yield self.finding(call, self._message(analysis, call, prediction, kind, activation),
                               self._fix_title(analysis, activation))

    @staticmethod
    def _message(analysis: "Analysis", call: ast.Call, prediction: ast.AST, kind: str, activation: ast.Call) -> str:
        loss = f"`{source_of(analysis, call)}`"
        given = f"`{source_of(analysis, activation)}`"
        if prediction is not activation:
            given = f"`{source_of(analysis, prediction, 30)}` (= {given}, line {activation.lineno})"
        logits = _activation_input(analysis, activation)
        fix = f"Pass the logits (`{source_of(analysis, logits, 30)}`)" if logits is not None else "Pass the logits"
        if kind == "sigmoid":
            return (
                f"{loss} is given {given}, but a with-logits loss applies the sigmoid itself: "
                "sigmoid of probabilities lies in (0.5, 0.73), so the loss barely moves and training stalls. "
                f"{fix}, or use `binary_cross_entropy` on probabilities."
            )
        if kind == "softmax":
            return (
                f"{loss} is given {given}, but cross entropy applies `log_softmax` itself: softmax of probabilities "
                f"is nearly uniform, so gradients shrink and training stalls. {fix}."
            )
        return (
            f"{loss} is given {given}, but cross entropy applies `log_softmax` itself, so it runs twice: the value "
            f"is the same, but the code reads as if the input were logits and pays for an extra pass. {fix}, "
            "or use `F.nll_loss` on log-probabilities."
        )

    @staticmethod
    def _fix_title(analysis: "Analysis", activation: ast.Call) -> str:
        logits = _activation_input(analysis, activation)
        if logits is None:
            return "Pass the logits"
        return f"Pass the logits `{source_of(analysis, logits, 30)}`"


def logits_loss_kind(analysis: "Analysis", call: ast.Call) -> str | None:
    """"cross_entropy" or "bce_with_logits" when `call` computes one of the logits losses."""
    qualname = analysis.call_qualname(call)
    if qualname in CROSS_ENTROPY_FUNCTIONS:
        return CROSS_ENTROPY_FUNCTIONS[qualname]
    if qualname in LOGITS_LOSS_FUNCTIONS:
        return LOGITS_LOSS_FUNCTIONS[qualname]
    if qualname is not None:
        return None
    constructor = module_constructor(analysis, call.func)
    return LOSS_MODULES.get(torch_module_class(analysis, constructor) or "")


def activation_output(analysis: "Analysis", expr: ast.AST, depth: int = 0) -> tuple[str, ast.Call] | None:
    """("softmax" | "log_softmax" | "sigmoid", the activation call) when `expr` is its output."""
    if depth > MAX_DEPTH:
        return None
    if isinstance(expr, ast.Name):
        value, via = followed(analysis, expr)
        return activation_output(analysis, value, depth + 1) if via is not None else None
    if isinstance(expr, ast.Subscript):
        return activation_output(analysis, expr.value, depth + 1)
    if not isinstance(expr, ast.Call) or has_star_args(expr):
        return None
    kind = activation_kind(analysis, expr)
    if kind is not None:
        return kind, expr
    if analysis.call_qualname(expr) is None and isinstance(expr.func, ast.Attribute):
        if expr.func.attr in VALUE_KEEPING_METHODS:
            return activation_output(analysis, expr.func.value, depth + 1)
    return None


def activation_kind(analysis: "Analysis", call: ast.Call) -> str | None:
    """"softmax", "log_softmax", "softmin" or "sigmoid" when `call` applies that activation."""
    qualname = analysis.call_qualname(call)
    if qualname in FUNCTIONAL_SOFTMAX or qualname in TORCH_SOFTMAX:
        return (FUNCTIONAL_SOFTMAX | TORCH_SOFTMAX)[qualname]
    if qualname in SIGMOID_FUNCTIONS:
        return "sigmoid"
    if qualname is not None:
        return None
    if _is_activation_method(call):
        return call.func.attr
    constructor = module_constructor(analysis, call.func)
    module_class = torch_module_class(analysis, constructor)
    if module_class == "Sigmoid":
        return "sigmoid"
    return SOFTMAX_MODULES.get(module_class or "")


def _is_activation_method(call: ast.Call) -> bool:
    """`logits.softmax(-1)`, `x.sigmoid()` — not `self.softmax(x)`, which runs a module."""
    func = call.func
    return (
        isinstance(func, ast.Attribute) and func.attr in ("softmax", "log_softmax", "sigmoid")
        and not (isinstance(func.value, ast.Name) and func.value.id == "self")
    )


def _activation_input(analysis: "Analysis", activation: ast.Call) -> ast.AST | None:
    """The logits an activation was applied to."""
    if analysis.call_qualname(activation) is None and _is_activation_method(activation):
        return activation.func.value
    return argument(activation, 0, "input")

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
from torch_lsp.fact_cache import FactKey
from torch_lsp.syntax_index import syntax_index
from torch_lsp.syntax_nodes import argument, has_star_args, is_self_attribute, walk_nodes

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
    given the output of `sigmoid` (directly or through a local variable), and a cross-entropy
    loss given the output of a model class of the file whose `forward` returns it through a
    `nn.Sequential` head ending in `nn.Softmax`/`nn.LogSoftmax` (no automatic fix there).

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
            if found is None and prediction is not None and loss == "cross_entropy":
                head = softmax_head_output(analysis, prediction)
                if head is not None:
                    yield self.finding(call, self._head_message(analysis, call, prediction, *head))  # no automatic fix
                continue
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
    def _head_message(analysis: "Analysis", call: ast.Call, prediction: ast.AST, kind: str,
                      layer: ast.Call, cls: ast.ClassDef) -> str:
        twice = ("softmax of probabilities is nearly uniform, so gradients shrink and training stalls"
                 if kind == "softmax" else "it runs twice and the code reads as if the input were logits")
        return (
            f"`{source_of(analysis, call)}` is given `{source_of(analysis, prediction, 30)}`, which "
            f"`{cls.name}.forward` returns through a `nn.Sequential` ending in `{source_of(analysis, layer, 30)}` "
            f"(line {layer.lineno}), but cross entropy applies `log_softmax` itself: {twice}. "
            f"Drop the final `{source_of(analysis, layer, 30)}` and return the logits."
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
    if qualname is not None or (type(call.func) is ast.Attribute and not is_self_attribute(call.func)):
        return None  # `x.view(...)`: no module's call (`module_constructor` follows names and `self.<x>`)
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


SOFTMAX_LAYERS = {"torch.nn.Softmax": "softmax", "torch.nn.LogSoftmax": "log_softmax",
                  "torch.nn.modules.activation.Softmax": "softmax", "torch.nn.modules.activation.LogSoftmax": "log_softmax"}


def softmax_head_output(analysis: "Analysis", expr: ast.AST) -> tuple[str, ast.Call, ast.ClassDef] | None:
    """`validity, label = discriminator(x)` where `Discriminator.forward` returns
    `self.aux_layer(out)` and `self.aux_layer = nn.Sequential(..., nn.Softmax())`: the kind of
    the head's last layer, that layer's constructor, and the model class (a class of this file)."""
    if isinstance(expr, ast.Call):
        value, index = expr, None  # `criterion(net(x), y)`
    elif isinstance(expr, ast.Name):
        bound = _bound_value(analysis.context(expr).function.statements, expr.id, expr.lineno)
        if bound is None:
            return None
        value, index = bound
    else:
        return None
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)):
        return None
    cls = _model_class(analysis, value.func.id)
    forward = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "forward"), None) if cls else None
    if forward is None:
        return None
    from torch_lsp.roles import self_attribute_values

    heads = set()
    for ret in (n for n in walk_nodes(forward) if isinstance(n, ast.Return) and n.value is not None):
        result = ret.value
        if index is not None:
            if not (isinstance(result, ast.Tuple) and index < len(result.elts)):
                return None
            result = result.elts[index]
        if isinstance(result, ast.Name):
            inner = _bound_value(forward.body, result.id, ret.lineno, walk=True)
            result = inner[0] if inner is not None and inner[1] is None else None
        if not (isinstance(result, ast.Call) and isinstance(result.func, ast.Attribute)
                and isinstance(result.func.value, ast.Name) and result.func.value.id == "self"):
            return None
        values = self_attribute_values(analysis, cls).get(result.func.attr, [])
        if len(values) != 1 or not isinstance(values[0], ast.Call):
            return None
        heads.add(id(values[0]))
        head = values[0]
    if len(heads) != 1 or analysis.call_qualname(head) != "torch.nn.Sequential" or not head.args:
        return None
    last = head.args[-1]
    kind = SOFTMAX_LAYERS.get(analysis.call_qualname(last) or "") if isinstance(last, ast.Call) else None
    return (kind, last, cls) if kind is not None else None


def _bound_value(statements: list[ast.stmt], name: str, before: int, walk: bool = False):
    """The value last bound to `name` before line `before`, with the tuple index when it is unpacked."""
    found = None
    nodes = [n for stmt in statements for n in (walk_nodes(stmt) if walk else [stmt])]
    for stmt in nodes:
        if not isinstance(stmt, ast.Assign) or stmt.lineno >= before or len(stmt.targets) != 1:
            continue
        target = stmt.targets[0]
        if isinstance(target, ast.Name) and target.id == name:
            found = (stmt.value, None)
        elif isinstance(target, ast.Tuple):
            for i, element in enumerate(target.elts):
                if isinstance(element, ast.Name) and element.id == name:
                    found = (stmt.value, i)
    return found


# {name: the called names in each `name = Callee(...)` of the file, in source order}: asked
# for every loss call's model, so built once per version instead of a pass over every
# statement per question.
_BUILT_BY_NAME: FactKey[dict[str, list[str]]] = FactKey("tl206.built_by_name")


def _built_by_name(analysis: "Analysis") -> dict[str, list[str]]:
    built: dict[str, list[str]] = {}
    for stmt in syntax_index(analysis).of_type(ast.Assign):
        if (len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) and isinstance(stmt.value, ast.Call)
                and isinstance(stmt.value.func, ast.Name)):
            built.setdefault(stmt.targets[0].id, []).append(stmt.value.func.id)
    return built


def _model_class(analysis: "Analysis", name: str) -> ast.ClassDef | None:
    """The class of this file that `name = ClassName(...)` (at module level or in the function) builds."""
    classes = {n.name: n for n in analysis.tree.body if isinstance(n, ast.ClassDef)}
    built = analysis.facts.get_or_compute(_BUILT_BY_NAME, lambda: _built_by_name(analysis)).get(name, [])
    if len(set(built)) != 1:
        return None
    return classes.get(built[0])

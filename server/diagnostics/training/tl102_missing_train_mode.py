"""TL102 missing-train-mode: flags a training loop that runs a model which is switched to eval mode
elsewhere in the file (say, by a `validate()` run every epoch) while nothing switches it back
with `model.train()` on the training path.
"""
from __future__ import annotations

import ast
from typing import Iterator

from torch_lsp.analysis import Analysis, LoopInfo, switches_to_eval
from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import Finding, Rule
from torch_lsp.syntax_nodes import loop_header_span


@register
class MissingTrainMode(Rule):
    """
    ## What it does
    Flags a training loop that runs a model which is switched to eval mode elsewhere in the
    file (say, by a `validate()` run every epoch) while nothing switches it back with
    `model.train()` on the training path.

    ## Why is this bad
    After the first validation the model stays in eval mode: dropout is off and batch-norm
    uses (and stops updating) its running statistics, so the rest of training silently
    trains a different network.

    ## Example
    ```python
    def validate(model, loader):
        model.eval()
        ...

    def train_epoch(model, loader, optimizer):
        for x, y in loader:
            ...
    ```

    ## Use instead
    ```python
    def train_epoch(model, loader, optimizer):
        model.train()
        for x, y in loader:
            ...
    ```
    """

    code = "TL102"
    name = "missing-train-mode"
    severity = "warning"
    fix_safety = "safe"

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        for loop in analysis.innermost_training_loops:
            if not (analysis.backward_calls(loop) or analysis.optimizer_steps(loop)):
                continue
            reported = False
            roles = analysis.roles_for(loop.function)
            for call in loop.calls:
                model = roles.model_name(call)
                if reported or model is None or analysis.context(call).grad_disabled:
                    continue
                evaluation = self._eval_before_training(analysis, loop, model)
                if evaluation is None:
                    continue
                where, inside_epoch = evaluation
                if self._train_on_path(analysis, loop, model, inside_epoch):
                    continue
                message = (
                    f"`{model}` is put in eval mode {where}, but nothing calls `{model}.train()` before this "
                    f"training loop, so dropout and batch-norm stay in eval mode after the first evaluation. "
                    f"Call `{model}.train()` before the loop."
                )
                reported = True
                yield self.finding_at(
                    loop_header_span(loop.node), message, f"Insert `{model}.train()` before the loop",
                    data={"model": model, "inside_epoch": inside_epoch},
                )

    def _eval_before_training(self, analysis: Analysis, loop: LoopInfo, model: str):
        """Where `model` can be switched to eval before the loop runs again, or None."""
        # An enclosing (epoch) loop evaluates the model between training passes.
        ancestor = loop.parent
        while ancestor is not None:
            for call in ancestor.calls:
                if switches_to_eval(analysis, call, model):
                    return f"by `{ast.unparse(call.func)}()` (line {call.lineno}) inside the enclosing loop", True
            ancestor = ancestor.parent
        function = loop.function
        if function.is_module or analysis.switched(function, model, "eval"):
            return None  # eval in the same function before training: deliberate (frozen BN) or not ours
        if model not in function.params:
            return None  # built here, so it starts in train mode
        # A per-epoch training function: validated elsewhere between calls.
        callers = analysis.callers(function)
        if callers and not any(analysis.context(c).loops for c in callers):
            return None
        for other, switches in analysis.mode_switches.items():
            if other is function:
                continue
            for switch in switches:
                if switch.name == model and switch.mode == "eval":
                    owner = "module level" if other.is_module else f"`{other.name}()`"
                    return f"in {owner} (line {switch.call.lineno})", False
        return None

    def _train_on_path(self, analysis: Analysis, loop: LoopInfo, model: str, inside_epoch: bool) -> bool:
        """`model.train()` runs again after each evaluation, before the loop trains."""
        function = loop.function
        if inside_epoch:
            # Evaluated inside an enclosing loop: a `train()` before that loop runs only once.
            outer = loop.parent
            while outer is not None:
                if any(_switches_to_train(c, model) for c in outer.calls):
                    return True
                outer = outer.parent
            return False
        if analysis.switched(function, model, "train"):
            return True
        for caller in analysis.callers(function):
            owner = analysis.context(caller).function
            if any(s.mode == "train" for s in analysis.mode_switches.get(owner, ())):
                return True
        return False


def _switches_to_train(call: ast.Call, model: str) -> bool:
    func = call.func
    return (
        isinstance(func, ast.Attribute) and func.attr == "train" and isinstance(func.value, ast.Name)
        and func.value.id == model and not (call.args and isinstance(call.args[0], ast.Constant) and call.args[0].value is False)
    )

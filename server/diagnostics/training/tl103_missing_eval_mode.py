"""TL103 missing-eval-mode: flags a model run in an evaluation context — under `torch.no_grad()` /
`torch.inference_mode()`, or in a `validate`/`evaluate`/`test`/`predict` function that receives
the model — when nothing puts that model in eval mode with `model.eval()`.
"""
from __future__ import annotations

from typing import Iterator

from torch_lsp.analysis import Analysis, eval_switch_before, evaluation_model_calls, in_eval_mode, name_says_evaluation
from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import Finding, Rule


@register
class MissingEvalMode(Rule):
    """
    ## What it does
    Flags a model run in an evaluation context — under `torch.no_grad()` /
    `torch.inference_mode()`, or in a `validate`/`evaluate`/`test`/`predict` function that
    receives the model — when nothing puts that model in eval mode with `model.eval()`.
    Layers visited one by one through `model.named_children()` or `model.modules()` (weight
    conversion, calibration) are not evaluations; names that start with a verb
    (`run_model`, `load_model`) are callbacks, not models.

    ## Why is this bad
    In train mode dropout still drops activations and batch-norm normalises with the
    statistics of the current batch (and updates its running averages), so metrics are
    noisy, wrong for small batches, and evaluation changes the model.

    ## Example
    ```python
    @torch.no_grad()
    def predict(model, images):
        return model(images).argmax(dim=-1)
    ```

    ## Use instead
    ```python
    @torch.no_grad()
    def predict(model, images):
        model.eval()
        return model(images).argmax(dim=-1)
    ```
    """

    code = "TL103"
    name = "missing-eval-mode"
    severity = "warning"
    fix_safety = "safe"

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        for function, call, model in evaluation_model_calls(analysis):
            evaluation = (
                analysis.context(call).grad_disabled
                or name_says_evaluation(analysis, function, model)
                or eval_switch_before(analysis, function, call) not in (None, model)
            )
            if not evaluation or in_eval_mode(analysis, function, call, model):
                continue
            message = (
                f"`{model}` runs in an evaluation context but is never put in eval mode, so dropout and "
                f"batch-norm behave as in training. Call `{model}.eval()` first."
            )
            yield self.finding(call, message, f"Insert `{model}.eval()` before evaluating", data={"model": model})

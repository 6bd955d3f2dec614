"""TL408 anomaly-detection-on: flags `torch.autograd.set_detect_anomaly(True)` and
`torch.autograd.detect_anomaly()` left on, unguarded, in code that trains.
"""
from __future__ import annotations

import ast
from typing import Iterator

from torch_lsp.analysis import Analysis
from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import Finding, Rule
from torch_lsp.syntax_nodes import argument, is_main_guard


_ANOMALY_SWITCHES = ("torch.autograd.set_detect_anomaly", "torch.autograd.anomaly_mode.set_detect_anomaly")
_ANOMALY_CONTEXTS = ("torch.autograd.detect_anomaly", "torch.autograd.anomaly_mode.detect_anomaly")


@register
class AnomalyDetectionOn(Rule):
    """
    ## What it does
    Flags `torch.autograd.set_detect_anomaly(True)` and `torch.autograd.detect_anomaly()`
    left on, unguarded (`if __name__ == "__main__":` is no guard), in code that trains (a
    training loop, a backward call, or a Lightning `training_step`).

    ## Why is this bad
    Anomaly detection records a stack trace for every operation and checks every backward
    result for NaNs; training runs several times slower. It is a debugging tool.

    ## Example
    ```python
    torch.autograd.set_detect_anomaly(True)
    ```

    ## Use instead
    ```python
    if args.debug:
        torch.autograd.set_detect_anomaly(True)
    ```
    """

    code = "TL408"
    name = "anomaly-detection-on"
    severity = "warning"
    fix_safety = "safe"

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        if not analysis.file_fact("TL408 the file trains", _trains):
            return
        for call in analysis.calls_to(*_ANOMALY_SWITCHES, *_ANOMALY_CONTEXTS):
            qualname = analysis.call_qualname(call)
            if any(not is_main_guard(if_stmt.test) for if_stmt, _ in analysis.context(call).guards):
                continue  # behind a flag; `if __name__ == "__main__":` is no debug switch
            if qualname in _ANOMALY_SWITCHES:
                mode = argument(call, 0, "mode")
                if not (isinstance(mode, ast.Constant) and mode.value is True):
                    continue
            elif qualname not in _ANOMALY_CONTEXTS:
                continue
            message = (
                f"`{ast.unparse(call)}` turns on anomaly detection, which slows every training step several times. "
                f"Remove it, or enable it only behind a debug flag."
            )
            yield self.finding(call, message, "Remove the anomaly detection")


def _trains(analysis: Analysis) -> bool:
    """The file trains somewhere: a training loop, a `backward()`, a Lightning `training_step`."""
    return bool(analysis.training_loops or analysis.iter_calls("backward") or _lightning_training_step(analysis))


def _lightning_training_step(analysis: Analysis) -> bool:
    """A `training_step` method: Lightning backpropagates the loss it returns."""
    return any(function.is_method and function.name == "training_step" for function in analysis.functions)



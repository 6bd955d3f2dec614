"""TL502 probe-failure: with the shape probe enabled, the probe ran the model (or the file's
top-level tensor code) with the inferred input shapes and it raised; the message carries the
runtime error.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import Finding, Related, Rule
from torch_lsp.shapes import infer_shapes
from torch_lsp.shapes.probe.session import probe_report_of

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis


@register
class ProbeFailure(Rule):
    """## What it does
    Reports, with the shape probe enabled, the line where running the model raised.
    torch-lsp runs each module's real `forward` on meta tensors (no memory, no data) with
    the input shapes it inferred from a call site, and the file's top-level tensor code the
    same way, in a separate, sandboxed process of your own interpreter (`probe.enabled` in
    the editor, `--probe` on the command line). The message carries the runtime error, as
    your own run would print it. Where TL501 or TL503 already proves the error statically,
    only that finding is reported.

    ## Why is this bad
    The static shape pass reports only what it can prove; some operations it cannot follow
    (`torch.fft`, custom autograd functions, shapes computed at run time). The probe runs
    the real code, so a mismatch anywhere in the forward pass shows up before the first
    training step does, without a GPU and without data.

    ## Example
    ```python
    class Spectral(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(64, 16)

        def forward(self, x):
            return self.proj(torch.fft.rfft(x).abs())  # rfft of 64 samples has 33 bins

    Spectral()(torch.randn(4, 64))
    ```

    ## Use instead
    ```python
    self.proj = nn.Linear(64 // 2 + 1, 16)
    ```

    ## Fix safety
    No automatic fix: the error says what disagrees, not which side is wrong.
    """

    code = "TL502"
    needs_probe = True
    name = "probe-failure"
    severity = "error"
    fix_safety = "none"

    def check(self, analysis: "Analysis") -> Iterator[Finding]:
        report = probe_report_of(analysis)
        if report is None:
            return
        # Where the static pass already proves the error (TL501, TL503), it says more: both
        # shapes or dtypes and where they come from.
        proven = {mismatch.line for mismatch in infer_shapes(analysis).mismatches}
        for failure in report.failures:
            if failure.line in proven:
                continue
            finding = self.finding_at((failure.line, failure.col, failure.end_line, failure.end_col), failure.message)
            finding.related = [Related(None, *where) for where in failure.related]
            yield finding

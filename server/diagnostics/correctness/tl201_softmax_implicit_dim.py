"""TL201 softmax-implicit-dim: flags `F.softmax`, `F.log_softmax` and `F.softmin` called without
`dim`, and `nn.Softmax()`, `nn.LogSoftmax()` and `nn.Softmin()` constructed without `dim`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import Finding, Rule
from torch_lsp.diagnostics.correctness.provenance import torch_module_class
from torch_lsp.diagnostics.correctness.quoting import source_of
from torch_lsp.diagnostics.correctness.torch_names import FUNCTIONAL_SOFTMAX, SOFTMAX_MODULES
from torch_lsp.syntax_nodes import argument, has_star_args, is_none
from torch_lsp.name_resolution import in_compatibility_code

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis


@register
class SoftmaxImplicitDim(Rule):
    """## What it does
    Flags `F.softmax`, `F.log_softmax` and `F.softmin` called without `dim`, and
    `nn.Softmax()`, `nn.LogSoftmax()` and `nn.Softmin()` constructed without `dim`.

    ## Why is this bad
    Without `dim`, PyTorch guesses the axis from the input's rank: dim 0 for 0-, 1- and
    3-D input, dim 1 otherwise. For a batch of sequences (`[B, N, C]`) that is the batch
    axis, so every sample's probabilities depend on the rest of the batch. The guess is
    deprecated and warns on every call. Not flagged: a call in a branch for other PyTorch
    versions (`if torch.__version__ < "0.3":`, before `dim` existed).

    ## Example
    ```python
    attn = F.softmax(scores)
    self.log_probs = nn.LogSoftmax()
    ```

    ## Use instead
    ```python
    attn = F.softmax(scores, dim=-1)
    self.log_probs = nn.LogSoftmax(dim=-1)
    ```
    """

    code = "TL201"
    name = "softmax-implicit-dim"
    severity = "warning"
    fix_safety = "safe"

    def check(self, analysis: "Analysis") -> Iterator[Finding]:
        for call in analysis.calls:
            qualname = analysis.call_qualname(call)
            if qualname in FUNCTIONAL_SOFTMAX:
                if not call.args and not call.keywords:
                    continue  # `F.softmax()`: no input either, a blank left to fill in (an exercise), not a call that runs
                dim = argument(call, 1, "dim")
                what = "the implicit choice is deprecated and picks"
            elif torch_module_class(analysis, call) in SOFTMAX_MODULES:
                dim = argument(call, 0, "dim")
                what = "the module then guesses the axis on every call, picking"
            else:
                continue
            if has_star_args(call):  # asked of softmax calls only: most calls are none
                continue
            if dim is not None and not is_none(dim):
                continue
            if dim is None and in_compatibility_code(analysis, call, versions_only=True):
                continue  # `if torch.__version__ < "0.3": F.log_softmax(x)`: the `dim` argument came in 0.3
            text = source_of(analysis, call)
            lacks = "has no `dim`" if dim is None else "passes `dim=None`"
            yield self.finding(
                call,
                f"`{text}` {lacks}: {what} dim 0 for 0-, 1- and 3-D input (the batch axis of a [B, N, C] "
                "tensor). Pass `dim=-1` (or the axis you mean).",
                "Add `dim=-1`" if dim is None else "Replace `dim=None` with `dim=-1`",
            )

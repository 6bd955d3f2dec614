"""TL501 shape-mismatch: flags operations whose tensor shapes are statically known to be
incompatible: a `Linear`, `Conv*`, `Embedding`, RNN or norm layer given the wrong feature or
channel size, `@`/`matmul`/`bmm` with different inner sizes, arithmetic between shapes that
cannot broadcast, `torch.cat`/`torch.stack` on tensors whose other dims differ, a
`view`/`reshape` to a different number of elements, an index past a known size, an input of a
rank the op rejects, a `dim` out of range, pooling or convolution with nothing left to output,
and a class-index loss target (or class weights) that does not fit its input.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import Finding, Rule
from torch_lsp.diagnostics.shapes.mismatch_findings import mismatch_findings

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis


@register
class ShapeMismatch(Rule):
    """## What it does
    Flags operations whose tensor shapes are statically known to be incompatible: a
    `Linear`, `Conv*`, `Embedding`, RNN or norm layer given the wrong feature or
    channel size, `@`/`matmul`/`bmm` with different inner sizes, arithmetic between
    shapes that cannot broadcast, `torch.cat`/`torch.stack` on tensors whose other
    dims differ, a `view`/`reshape` to a different number of elements, and an index
    past a known size. Also what an operation requires of its input: its rank
    (`max_pool2d` takes 3-d or 4-d, `Dropout2d` at least 2-d), a `dim` within it
    (`log_softmax(x, dim=4)` on a 4-d tensor, `flatten` with the start after the end),
    pooling padding at most half the kernel, a pooling or convolution output of at
    least one element, and for `nll_loss`/`cross_entropy` a target with the input's
    batch size, one dim fewer and its other sizes, and one class weight per class.
    Shapes come from factories, layers, shape comments, annotations and the call sites
    of the file; only definite contradictions are reported, never guesses. Some hold
    for every size, with no call site at all: `2*hidden` features (a bidirectional
    LSTM's output) are never the `hidden` a `Linear(hidden, ...)` takes. A call in another
    file that makes a model's code raise (`train.py` gives `Net()` a batch its `fc` cannot
    take) is reported at the call, naming the line that raises; the editor also shows it
    at that line of the model file while both are open, each linked to the other, and
    `torch-lsp check` on both files reports it once, at that line, the call as its related
    location.

    ## Why is this bad
    Each of these raises a `RuntimeError` the first time the line runs, often minutes
    into a job, after data loading and model set-up. The message names both shapes
    and where each came from, so the fix is usually one constant.

    ## Example
    ```python
    self.fc1 = nn.Linear(784, 128)
    self.fc2 = nn.Linear(256, 10)
    ...
    x = self.fc2(self.fc1(x))  # fc2 expects 256 features, gets 128
    ```

    ## Use instead
    ```python
    self.fc1 = nn.Linear(784, 128)
    self.fc2 = nn.Linear(128, 10)
    ```
    """

    code = "TL501"
    needs_shapes = True
    whole_file = True  # the shape pass's mismatches are listed for the whole file
    name = "shape-mismatch"
    severity = "error"
    fix_safety = "none"

    def check(self, analysis: "Analysis") -> Iterator[Finding]:
        return mismatch_findings(self, analysis, "shape")

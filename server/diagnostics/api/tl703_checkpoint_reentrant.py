"""TL703 checkpoint-reentrant: `torch.utils.checkpoint.checkpoint(...)` (or
`checkpoint_sequential`) without an explicit `use_reentrant`."""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.api.uses import calls_of
from torch_lsp.diagnostics.base import Finding, Rule
from torch_lsp.syntax_nodes import has_star_args, keyword, node_text

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis

CHECKPOINTS = ("torch.utils.checkpoint.checkpoint", "torch.utils.checkpoint.checkpoint_sequential")


@register
class CheckpointReentrant(Rule):
    """## What it does
    Flags activation checkpointing (`torch.utils.checkpoint.checkpoint`,
    `checkpoint_sequential`) called without `use_reentrant=`.

    ## Why is this bad
    Left out, PyTorch picks the old reentrant implementation and warns on every call
    (since 2.1), and announces that leaving it out will become an error.  The reentrant
    variant does not support `torch.autograd.grad`, keyword arguments to the function,
    or inputs that do not require grad (the gradient of the checkpointed parameters is
    then silently None).

    ## Example
    ```python
    out = checkpoint(block, x)
    ```

    ## Use instead
    ```python
    out = checkpoint(block, x, use_reentrant=False)
    ```

    ## Fix safety
    Unsafe: the non-reentrant variant is the recommended one, but it behaves differently
    (for example with in-place operations or when nested); the change needs a test run.
    """

    code = "TL703"
    name = "checkpoint-reentrant"
    severity = "warning"
    fix_safety = "unsafe"

    def check(self, analysis: "Analysis") -> Iterator[Finding]:
        for qualname in CHECKPOINTS:
            for call in calls_of(analysis, qualname):
                if keyword(call, "use_reentrant") is not None or has_star_args(call):
                    continue
                name = node_text(analysis.lines, call.func)
                yield self.finding(
                    call,
                    f"`{name}(...)` without `use_reentrant` uses the reentrant implementation and warns on every "
                    "call (leaving it out is to become an error). Pass `use_reentrant=False` (recommended) or `True` "
                    "to keep the old behaviour.",
                    "Add `use_reentrant=False`",
                )

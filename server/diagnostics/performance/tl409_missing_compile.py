"""TL409 missing-compile: flags a file that trains a model without ever calling `torch.compile`."""
from __future__ import annotations

from typing import Iterator

from torch_lsp.analysis import Analysis
from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import Finding, Rule
from torch_lsp.syntax_nodes import call_name


@register
class MissingCompile(Rule):
    """
    ## What it does
    Flags a file that trains a model without ever calling `torch.compile`. Off by default:
    enable it with `extend-select = ["TL409"]`.

    ## Why is this bad
    On recent GPUs `torch.compile` often speeds training up substantially by fusing
    kernels; it is a one-line change worth trying.

    ## Example
    ```python
    model = Net().to(device)
    for x, y in loader:
        ...
    ```

    ## Use instead
    ```python
    model = torch.compile(Net().to(device))
    for x, y in loader:
        ...
    ```
    """

    code = "TL409"
    name = "missing-compile"
    severity = "information"
    fix_safety = "none"
    enabled_by_default = False

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        if any(analysis.call_qualname(c) == "torch.compile" or call_name(c) == "compile" for c in analysis.calls):
            return
        for loop in analysis.training_loops:
            if not analysis.is_step_loop(loop):
                continue
            roles = analysis.roles_for(loop.function)
            for call in loop.calls:
                model = roles.model_name(call)
                if model:
                    yield self.finding(call, f"`{model}` is trained without `torch.compile`. Try "
                                             f"`{model} = torch.compile({model})` for faster steps.")
                    return

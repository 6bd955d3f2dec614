"""How TL701/TL704 messages name what the code does with an API."""
from __future__ import annotations

from typing import TYPE_CHECKING

from torch_lsp.diagnostics.api.catalogue import SIX_NAMES
from torch_lsp.diagnostics.api.uses import ApiUse
from torch_lsp.syntax_nodes import node_text

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis


def what_is_used(analysis: "Analysis", use: ApiUse) -> str:
    """The API as the line uses it, a noun phrase: "`torch.qr`", "`T.qr` (`torch.qr`)",
    "`torch.qr`, imported here,", "`.qr()` (`torch.qr` as a tensor method)"."""
    qualname = use.api.qualname
    if use.kind == "import":
        return f"`{use.imported.qualname}`, imported here,"
    if use.kind == "method":
        return f"`.{use.node.func.attr}()` (`{qualname}` as a tensor method)"
    name = node_text(analysis.lines, use.reference.node)
    return f"`{qualname}`" if name == qualname else f"`{name}` (`{qualname}`)"


def advice_for(use: ApiUse) -> str:
    """What to use instead: for one name imported from `torch._six` its own replacement
    (`int` for `int_classes`), else the entry's advice."""
    if use.kind == "import" and use.api.qualname == "torch._six":
        return SIX_NAMES.get(use.imported.qualname.removeprefix("torch._six."), use.api.instead)
    return use.api.instead

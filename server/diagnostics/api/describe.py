"""How TL701/TL704 messages name what the code does with an API."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from torch_lsp.diagnostics.api.catalogue import SIX_NAMES
from torch_lsp.diagnostics.api.uses import ApiUse
from torch_lsp.fact_cache import FactKey
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


def advice_for(use: ApiUse, analysis: "Analysis | None" = None) -> str:
    """What to use instead: for one name imported from `torch._six` its own replacement
    (`int` for `int_classes`); in a type annotation (`scaler: amp.GradScaler`) the new class
    itself, since a call such as `torch.amp.GradScaler("cuda", ...)` cannot annotate;
    else the entry's advice."""
    if use.kind == "import" and use.api.qualname == "torch._six":
        return SIX_NAMES.get(use.imported.qualname.removeprefix("torch._six."), use.api.instead)
    replacement = use.api.replacement
    if (analysis is not None and use.kind == "reference" and replacement and use.api.instead != f"`{replacement}`"
            and id(use.node) in _annotation_nodes(analysis)):
        return f"`{replacement}` in the annotation (built as {use.api.instead})"
    return use.api.instead


_ANNOTATIONS: FactKey[frozenset[int]] = FactKey("ids of the nodes inside type annotations")


def _annotation_nodes(analysis: "Analysis") -> frozenset[int]:
    def collect() -> frozenset[int]:
        annotations = []
        for node in ast.walk(analysis.tree):
            if isinstance(node, ast.arg) or isinstance(node, ast.AnnAssign):
                annotations.append(node.annotation)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                annotations.append(node.returns)
        return frozenset(id(inner) for annotation in annotations if annotation is not None
                         for inner in ast.walk(annotation))
    return analysis.facts.get_or_compute(_ANNOTATIONS, collect)

"""The inferred shape of a tensor as rules about its batch dim need it (TL202).

`inferred_shape(analysis, node)` reads the shape pass (`infer_shapes`) and answers with
the same attributes as `torch_lsp.shapes.rank.KnownShape` (`dims`, `rank`, `batch_first`,
`origin`, `stated_by`), so a rule can fall back on it where `rank.shape_of` finds nothing:

    shape = shape_of(analysis, tensor) or inferred_shape(analysis, tensor)

Dim 0 counts as the batch only when the shape pass names it with a batch-like symbol
(`B`, `bsz`, `batch_size`, from `B, T, C = x.shape`, `torch.zeros(B, N)`, a comment,
an annotation) and no other dim has that size: concrete sizes never say which dim is
the batch, and a `[B, B]` similarity matrix is meant to be normalised over dim 0.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING

from torch_lsp.shapes.dims import Dim, Symbol
from torch_lsp.shapes.rank import BATCH_NAME

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis


@dataclass(frozen=True)
class InferredShape:
    dims: tuple[Dim | None, ...]
    batch_first: bool
    origin: str  # "`torch.bmm(q, k)` on line 18", for messages
    stated_by: ast.AST | None = None  # as in `KnownShape`: never the expression itself here

    @property
    def rank(self) -> int:
        return len(self.dims)


def inferred_shape(analysis: "Analysis", node: ast.AST) -> InferredShape | None:
    """The tensor `node` evaluates to, when its rank is known; None otherwise."""
    from torch_lsp.shapes import infer_shapes

    tensor = infer_shapes(analysis).symbolic_tensor_at(node)
    if tensor is None or tensor.rank is None:
        return None
    origin = tensor.origin
    text = f"`{origin.text}` on line {origin.line}" if origin is not None else f"the shape pass (line {node.lineno})"
    return InferredShape(tensor.dims, _batch_first(tensor.dims), text)


def _batch_first(dims: tuple[Dim | None, ...]) -> bool:
    if not dims or dims[0] is None:
        return False
    first = dims[0]
    terms = first.terms
    if len(terms) != 1 or terms[0][1] != 1 or len(terms[0][0]) != 1 or not isinstance(terms[0][0][0], Symbol):
        return False
    if not BATCH_NAME.match(terms[0][0][0].name):
        return False
    return all(d != first for d in dims[1:])

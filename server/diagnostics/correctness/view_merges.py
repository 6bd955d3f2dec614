"""How `view(*sizes)` regroups the dims of a transposed tensor (TL203).

Sizes are shape-pass `Dim`s: what the shape pass knows of each dim and of each `view`
argument (`B`, `self.heads` -> `heads`), else the symbol the code spells (`n`,
`x.size(1)`).  A `view` keeps, splits or merges consecutive dims; a merge of dims that
a transpose moved apart cannot be a view of the same memory.  Sizes are compared as
the code that writes them assumes: `heads * (C // heads)` is `C`.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from torch_lsp.shapes.dims import Dim, assuming_divisible
from torch_lsp.syntax_nodes import dotted, int_constant

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis

WILDCARD = "-1"  # a `-1` in a view: whatever is left


def same_size(a: Dim, b: Dim) -> bool:
    return a == b or assuming_divisible(a) == assuming_divisible(b)


def dim_of(expr: ast.AST, known: Callable[[ast.AST], Dim | None],
           resolve: Callable[[ast.AST, int], Dim | None] | None = None) -> Dim | str | None:
    """The size a `view` argument spells, `WILDCARD` for -1, or None when unknown.

    `known(node)` is what the shape pass knows of a name or attribute; `resolve(tensor,
    index)` may answer `x.size(k)` / `x.shape[k]` from a known shape."""
    value = int_constant(expr)
    if value is not None:
        if value == -1:
            return WILDCARD
        return Dim.const(value) if value >= 1 else None
    if isinstance(expr, (ast.Name, ast.Attribute)):
        name = dotted(expr)
        if name is None:
            return None
        return known(expr) or Dim.symbol(name)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Mult, ast.FloorDiv)):
        left, right = dim_of(expr.left, known, resolve), dim_of(expr.right, known, resolve)
        if not isinstance(left, Dim) or not isinstance(right, Dim):
            return None
        return left * right if isinstance(expr.op, ast.Mult) else left.floordiv(right)
    reference = size_reference(expr)
    if reference is not None:
        tensor, index = reference
        found = resolve(tensor, index) if resolve else None
        if found is not None:
            return found
        symbol = size_symbol(tensor, index)
        return Dim.symbol(symbol) if symbol else None
    return None


def size_symbol(tensor: ast.AST, index: int) -> str | None:
    """One spelling for `x.size(1)`, `x.shape[1]` and `x.size()[1]`."""
    name = dotted(tensor)
    return f"{name}.size({index})" if name else None


def size_reference(expr: ast.AST) -> tuple[ast.AST, int] | None:
    """(`x`, k) for `x.size(k)`, `x.shape[k]`, `x.size()[k]`."""
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "size":
        if len(expr.args) == 1 and not expr.keywords:
            index = int_constant(expr.args[0])
            if index is not None:
                return expr.func.value, index
        return None
    if isinstance(expr, ast.Subscript):
        index = int_constant(expr.slice)
        base = expr.value
        if index is None:
            return None
        if isinstance(base, ast.Attribute) and base.attr == "shape":
            return base.value, index
        if (
            isinstance(base, ast.Call) and isinstance(base.func, ast.Attribute) and base.func.attr == "size"
            and not base.args and not base.keywords
        ):
            return base.func.value, index
    return None


@dataclass(frozen=True)
class MergeGroup:
    """Consecutive dims of the transposed tensor that one `view` size merges."""

    old_order: tuple[int, ...]  # their order before the transpose (size-1 dims not counted)
    moved: bool  # at least one of them changed position in the transpose

    @property
    def keeps_memory_order(self) -> bool:
        """True when the merged dims were adjacent and in this order before the transpose."""
        return all(b == a + 1 for a, b in zip(self.old_order, self.old_order[1:]))


# One dim of a transposed tensor: (size, position before the transpose, position after).
TransposedDim = tuple[Dim, int, int]


def view_merges(dims: list[TransposedDim], sizes: list[Dim | str]) -> list[MergeGroup] | None:
    """How `view(*sizes)` regroups the dims of a transposed tensor.

    Returns the merge groups (empty when the view only keeps or splits dims, or adds and
    drops size-1 dims), or None when the sizes cannot be matched symbolically.
    """
    kept = [d for d in dims if d[0].as_int() != 1]
    old_rank = {old: rank for rank, old in enumerate(sorted(d[1] for d in kept))}
    entries = [(size, old_rank[old], old != new) for size, old, new in kept]
    sizes = [s for s in sizes if not (isinstance(s, Dim) and s.as_int() == 1)]
    if sizes.count(WILDCARD) > 1:
        return None
    if WILDCARD not in sizes:
        matched = _match_prefix(entries, sizes)
        return matched[0] if matched is not None and matched[1] == len(entries) else None
    cut = sizes.index(WILDCARD)
    head = _match_prefix(entries, sizes[:cut])
    tail = _match_prefix(entries[::-1], sizes[cut + 1:][::-1])
    if head is None or tail is None or head[1] + tail[1] > len(entries):
        return None
    groups = head[0] + [MergeGroup(g.old_order[::-1], g.moved) for g in tail[0]]
    middle = entries[head[1]: len(entries) - tail[1]]
    if len(middle) > 1:
        groups.append(_group(middle))
    return groups


def _group(entries: list[tuple[Dim, int, bool]]) -> MergeGroup:
    return MergeGroup(tuple(old for _, old, _ in entries), any(moved for _, _, moved in entries))


def _match_prefix(entries: list[tuple[Dim, int, bool]], sizes: list[Dim]) -> tuple[list[MergeGroup], int] | None:
    """Match every size against a prefix of `entries`: (merge groups, entries used), or None."""
    groups: list[MergeGroup] = []
    i = j = 0
    while j < len(sizes):
        if i >= len(entries) or not isinstance(sizes[j], Dim):
            return None
        if same_size(sizes[j], entries[i][0]):
            i, j = i + 1, j + 1
            continue
        merged_end = _product_reaches([e[0] for e in entries], i, sizes[j])
        if merged_end is not None:  # one size merges entries[i:merged_end]
            groups.append(_group(entries[i:merged_end]))
            i, j = merged_end, j + 1
            continue
        split_end = _product_reaches(sizes, j, entries[i][0])
        if split_end is None:  # entries[i] is split into sizes[j:split_end]
            return None
        i, j = i + 1, split_end
    return groups, i


def _product_reaches(dims: list, start: int, target: Dim) -> int | None:
    """The end of the shortest run `dims[start:end]` (two or more) whose product is `target`."""
    product = dims[start]
    for end in range(start + 1, len(dims)):
        if not isinstance(dims[end], Dim):
            return None
        product = product * dims[end]
        if same_size(product, target):
            return end + 1
    return None

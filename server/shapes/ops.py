"""Shape rules of tensor operations, as pure functions on abstract tensors.

Each rule returns the result's `Tensor` (or a tuple of them), unknown parts as None,
and raises `ShapeError` only when the operation surely fails at run time with the
shapes given: two concrete sizes that differ where PyTorch needs them equal, or two
symbolic sizes whose difference is a non-zero integer.  Anything not understood
gives an unknown result, never a guess.
"""
from __future__ import annotations

from typing import Sequence

from torch_lsp.shapes.dims import Dim, known_sum, product
from torch_lsp.shapes.values import Origin, Tensor, TupleValue, UNKNOWN_TENSOR

ONE = Dim.const(1)
MAX_UNBIND = 64  # tuples longer than this are kept as "some tensors"


class ShapeError(Exception):
    """The operation fails at run time for these shapes; the message says why."""


# ---------------------------------------------------------------- describing
def describe(tensor: Tensor) -> str:
    """`[B, 64] (from self.fc1: Linear(784 → 64), line 12)` for messages."""
    text = tensor.render()
    if tensor.origin is not None:
        text += f" ({tensor.origin.describe()})"
    return text


def is_one(dim: Dim | None) -> bool:
    return dim is not None and dim.as_int() == 1


def concrete(dim: Dim | None) -> int | None:
    return dim.as_int() if dim is not None else None


def surely_differ(a: Dim | None, b: Dim | None) -> bool:
    return a is not None and b is not None and a.differs_from(b)


def normalize_dim(index: int, rank: int, extra: int = 0) -> int | None:
    """A dim index in [0, rank + extra) or None when out of range."""
    size = rank + extra
    if -size <= index < size:
        return index % size if size else None
    return None


def numel(tensor: Tensor) -> Dim | None:
    if not tensor.fully_known:
        return None
    return product(tensor.dims)  # type: ignore[arg-type]


# ------------------------------------------------------------------ broadcast
def broadcast(tensors: Sequence[Tensor], origin: Origin | None = None) -> Tensor:
    """The broadcast shape of several tensors (scalars are rank-0 tensors)."""
    if len(tensors) == 1:
        return tensors[0]
    width = 0
    variadic = False
    for tensor in tensors:
        width = max(width, len(tensor.dims))
        variadic = variadic or tensor.variadic
    dims: list[Dim | None] = []
    for position in range(1, width + 1):
        dims.append(_broadcast_position(tensors, position))
    result = Tensor(tuple(reversed(dims)), variadic, common_dtype(tensors), origin)
    return _keep_origin(tensors, result)


def _broadcast_position(tensors: Sequence[Tensor], position: int) -> Dim | None:
    sizes: list[Dim | None] = []
    for tensor in tensors:
        if position <= len(tensor.dims):
            sizes.append(tensor.dims[-position])
        elif tensor.variadic:
            sizes.append(None)  # may exist, size unknown
    big = None  # the first concrete size other than 1: every other size must be 1 or this one
    unknown = False
    for size in sizes:
        if size is None:
            unknown = True
            continue
        value = size.as_int()
        if value is not None and value != 1:
            if big is None:
                big, big_value = size, value
            elif value != big_value:
                raise ShapeError("broadcast")
    if big is not None:
        return big
    if unknown:
        return None
    symbolic = [s for s in sizes if s.as_int() != 1]
    if not symbolic:
        return ONE
    first = symbolic[0]
    return first if all(s == first for s in symbolic) else None


# torch promotes across these kinds upwards: `torch.rand(3) * 10` is float, `mask & mask` bool.
_KIND_ORDER = {"bool": 0, "long": 1, "float": 2}


def common_dtype(tensors: Sequence[Tensor]) -> str | None:
    """The kind torch's type promotion gives: the highest kind among the operands (a Python
    number or a 0-d tensor of a lower kind never lowers it); None when one is unknown.  A
    tensor of unknown rank counts too: `2 * coords` is float when `coords` is, whatever its rank."""
    kinds = {t.dtype for t in tensors}
    if not kinds or not kinds <= _KIND_ORDER.keys():
        return None
    return max(kinds, key=_KIND_ORDER.__getitem__)


def _keep_origin(inputs: Sequence[Tensor], result: Tensor) -> Tensor:
    """A result with the shape of one input keeps that input's origin (it is where the shape came from)."""
    for tensor in inputs:
        if tensor.dims == result.dims and tensor.variadic == result.variadic and tensor.origin is not None:
            return result.with_origin(tensor.origin)
    return result


def render_inner(a: Tensor, b: Tensor) -> str:
    """`64 and 32`: the contracted sizes of `a @ b`, for messages."""
    left = a.dims[-1] if a.dims else None
    right = b.dims[-2] if len(b.dims) >= 2 else (b.dims[-1] if b.dims else None)
    return " and ".join("?" if d is None else d.render() for d in (left, right))


def broadcast_error(tensors: Sequence[Tensor], what: str) -> str:
    shapes = " and ".join(describe(t) for t in tensors)
    return f"{what} broadcasts {shapes}, which cannot broadcast"


# ------------------------------------------------------------------- matmul
def matmul(a: Tensor, b: Tensor, origin: Origin | None) -> Tensor:
    if a.rank == 0 or b.rank == 0:
        return UNKNOWN_TENSOR  # matmul of a 0-d tensor raises; not a size mismatch
    inner_a = a.dims[-1] if a.dims else None
    inner_b = _contracted_dim_of_right(b)
    if surely_differ(inner_a, inner_b):
        raise ShapeError("inner")
    if a.rank == 1 and b.rank == 1:
        return Tensor((), False, _product_dtype(a, b), origin)
    if b.rank == 1:
        return Tensor(a.dims[:-1], a.variadic, _product_dtype(a, b), origin)
    if a.rank == 1:
        if b.rank is None and len(b.dims) < 2:
            return UNKNOWN_TENSOR
        return Tensor(b.dims[:-2] + b.dims[-1:], b.variadic, _product_dtype(a, b), origin)
    if (a.variadic and len(a.dims) < 2) or (b.variadic and len(b.dims) < 2):
        if b.rank == 2 and len(a.dims) >= 1:
            return Tensor((b.dims[-1],), True, _product_dtype(a, b), origin)
        return UNKNOWN_TENSOR
    try:
        batch = broadcast([Tensor(a.dims[:-2], a.variadic), Tensor(b.dims[:-2], b.variadic)])
    except ShapeError:
        raise ShapeError("batch") from None  # the inner sizes agree; the batch dims do not broadcast
    return Tensor(batch.dims + (a.dims[-2], b.dims[-1]), batch.variadic, _product_dtype(a, b), origin)


def _product_dtype(a: Tensor, b: Tensor) -> str | None:
    """A matrix product has its operands' dtype (they must agree: it does not promote)."""
    return a.dtype if a.dtype == b.dtype else None


def _contracted_dim_of_right(b: Tensor) -> Dim | None:
    if b.rank == 1:
        return b.dims[0]
    if len(b.dims) >= 2:
        return b.dims[-2]
    return None


def mm(a: Tensor, b: Tensor, origin: Origin | None) -> Tensor:
    if a.rank != 2 or b.rank != 2:
        return UNKNOWN_TENSOR
    if surely_differ(a.dims[1], b.dims[0]):
        raise ShapeError("inner")
    return Tensor((a.dims[0], b.dims[1]), False, _product_dtype(a, b), origin)


def bmm(a: Tensor, b: Tensor, origin: Origin | None) -> Tensor:
    if a.rank not in (3, None) or b.rank not in (3, None):
        raise ShapeError("rank")  # torch: "batch1 must be a 3D tensor"
    if a.rank != 3 or b.rank != 3:
        return Tensor((None, None, None), False, _product_dtype(a, b), origin) if (a.rank in (3, None) and b.rank in (3, None)) \
            else UNKNOWN_TENSOR
    if surely_differ(a.dims[2], b.dims[1]):
        raise ShapeError("inner")
    if surely_differ(a.dims[0], b.dims[0]):
        raise ShapeError("batch")
    batch = a.dims[0] if a.dims[0] is not None else b.dims[0]
    return Tensor((batch, a.dims[1], b.dims[2]), False, _product_dtype(a, b), origin)


def linear(x: Tensor, in_features: Dim | None, out_features: Dim | None, origin: Origin | None) -> Tensor:
    """`[..., in] -> [..., out]` (also `F.linear`); floating point, as its weight is (integer
    inputs raise)."""
    if x.rank == 0:
        raise ShapeError("features")
    if x.dims and surely_differ(x.dims[-1], in_features):
        raise ShapeError("features")
    if not x.dims:
        return Tensor((out_features,), True, "float", origin)
    return Tensor(x.dims[:-1] + (out_features,), x.variadic, "float", origin)


def einsum(spec: str, operands: Sequence[Tensor], origin: Origin | None) -> Tensor:
    spec = spec.replace(" ", "")
    inputs, _, output = spec.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(operands):
        return UNKNOWN_TENSOR
    sizes: dict[str, list[Dim | None]] = {}
    owners: dict[str, list[Tensor]] = {}  # the operand each of `sizes` came from
    ellipsis: Tensor | None = None
    for term, operand in zip(terms, operands):
        letters = term.replace("...", "")
        if "..." in term:
            if operand.rank is None:
                return UNKNOWN_TENSOR
            before, after = term.split("...")
            middle = operand.rank - len(before) - len(after)
            if middle < 0:
                return UNKNOWN_TENSOR
            part = Tensor(operand.dims[len(before):len(before) + middle])
            try:
                ellipsis = part if ellipsis is None else broadcast([ellipsis, part])
            except ShapeError:
                raise ShapeError(f"the `...` dims of {describe(operand)} do not broadcast with the other "
                                 f"operands' ({ellipsis.render()})") from None
            dims = operand.dims[:len(before)] + operand.dims[len(before) + middle:]
        else:
            if operand.rank is not None and operand.rank != len(letters):
                return UNKNOWN_TENSOR
            dims = operand.dims if operand.rank is not None else (None,) * len(letters)
            if operand.rank is None and len(operand.dims) > len(letters):
                return UNKNOWN_TENSOR
            if operand.rank is None:
                dims = (None,) * (len(letters) - len(operand.dims)) + operand.dims
        for letter, dim in zip(letters, dims):
            sizes.setdefault(letter, []).append(dim)
            owners.setdefault(letter, []).append(operand)
            _check_einsum_letter(letter, sizes[letter], owners[letter])
    if "->" not in spec:
        counts = {c: inputs.count(c) for c in set(inputs) if c.isalpha()}
        output = ("..." if "..." in inputs else "") + "".join(sorted(c for c, n in counts.items() if n == 1))
    result: list[Dim | None] = []
    head, dots, tail = output.partition("...")
    for letter in head:
        result.append(_einsum_size(sizes.get(letter, [None])))
    if dots:
        if ellipsis is None:
            return UNKNOWN_TENSOR
        result.extend(ellipsis.dims)
    for letter in tail:
        result.append(_einsum_size(sizes.get(letter, [None])))
    return Tensor(tuple(result), False, None, origin)


def _check_einsum_letter(letter: str, sizes: list[Dim | None], owners: list[Tensor]) -> None:
    """A subscript's sizes must agree, a size 1 broadcasting (as in torch): two known sizes
    other than 1 that differ raise; symbolic sizes are never judged (`n` may be 1)."""
    size = concrete(sizes[-1])
    if size is None or size == 1:
        return
    for earlier, owner in zip(sizes[:-1], owners[:-1]):
        value = concrete(earlier)
        if value is not None and value != 1 and value != size:
            where = "the same operand" if owner is owners[-1] else describe(owner)
            raise ShapeError(f"subscript `{letter}` is {value} in {where} and {size} in {describe(owners[-1])}")


def _einsum_size(candidates: list[Dim | None]) -> Dim | None:
    known = [d for d in candidates if d is not None and not is_one(d)]
    if any(d is None for d in candidates):
        concrete_known = [d for d in known if d.is_int]
        return concrete_known[0] if concrete_known else None
    if not known:
        return ONE
    first = known[0]
    if all(d == first for d in known):
        return first
    concrete_known = [d for d in known if d.is_int]
    return concrete_known[0] if concrete_known else None


# ------------------------------------------------------------ view / reshape
WILDCARD = "wildcard"  # a -1 in a view: whatever is left


def view(tensor: Tensor, sizes: Sequence[Dim | None | str], origin: Origin | None) -> Tensor:
    """`view` / `reshape` to `sizes` (each a Dim, None for unknown, or WILDCARD for -1)."""
    wildcards = [i for i, s in enumerate(sizes) if s == WILDCARD]
    if len(wildcards) > 1:
        return UNKNOWN_TENSOR
    total = numel(tensor)
    known = [s for s in sizes if s != WILDCARD]
    if any(s is None for s in known):
        dims = [None if s == WILDCARD else s for s in sizes]
        return Tensor(tuple(dims), False, tensor.dtype, origin)
    given = product(known)  # type: ignore[arg-type]
    if not wildcards:
        if total is not None and surely_differ(total, given):
            raise ShapeError("numel")
        return Tensor(tuple(sizes), False, tensor.dtype, origin)  # type: ignore[arg-type]
    rest: Dim | None = None
    if total is not None:
        whole, part = total.as_int(), given.as_int()
        if whole is not None and part is not None:
            if part and whole % part:
                raise ShapeError("numel")
            rest = Dim.const(whole // part) if part else None
        elif part != 0:
            rest = total.divide_exactly(given) or total.floordiv(given)
    dims = [rest if s == WILDCARD else s for s in sizes]
    return Tensor(tuple(dims), False, tensor.dtype, origin)


def flatten(tensor: Tensor, start: int, end: int, origin: Origin | None) -> Tensor:
    if tensor.rank == 0:
        return Tensor((ONE,), False, tensor.dtype, origin)
    if tensor.rank is None:
        if start < 0 and end < 0 and -start <= len(tensor.dims) and start <= end:
            merged = _merge(tensor.dims[start:end + 1 if end != -1 else None])
            after = tensor.dims[end + 1:] if end != -1 else ()
            return Tensor(tensor.dims[:start] + (merged,) + after, True, tensor.dtype, origin)
        if start >= 0 and end == -1:
            return Tensor((None,) * (start + 1), False, tensor.dtype, origin)
        return UNKNOWN_TENSOR
    rank = tensor.rank
    s, e = normalize_dim(start, rank), normalize_dim(end, rank)
    if s is None or e is None or s > e:
        return UNKNOWN_TENSOR
    merged = _merge(tensor.dims[s:e + 1])
    return Tensor(tensor.dims[:s] + (merged,) + tensor.dims[e + 1:], False, tensor.dtype, origin)


def _merge(dims: Sequence[Dim | None]) -> Dim | None:
    if any(d is None for d in dims):
        return None
    result = product(dims)  # type: ignore[arg-type]
    return None if result.is_too_large() else result


def unflatten(tensor: Tensor, dim: int, sizes: Sequence[Dim | None | str], origin: Origin | None) -> Tensor:
    if tensor.rank is None:
        return UNKNOWN_TENSOR
    d = normalize_dim(dim, tensor.rank)
    if d is None:
        return UNKNOWN_TENSOR
    piece = view(Tensor((tensor.dims[d],)), sizes, None)
    if piece.rank is None:
        return UNKNOWN_TENSOR
    return Tensor(tensor.dims[:d] + piece.dims + tensor.dims[d + 1:], False, tensor.dtype, origin)


# ----------------------------------------------------------- reordering dims
def with_rank(tensor: Tensor, rank: int) -> Tensor | None:
    """The tensor seen with a known rank (leading unknown dims filled in), if that fits."""
    if tensor.rank is not None:
        return tensor if tensor.rank == rank else None
    if len(tensor.dims) > rank:
        return None
    return Tensor((None,) * (rank - len(tensor.dims)) + tensor.dims, False, tensor.dtype, tensor.origin)


def permute(tensor: Tensor, order: Sequence[int], origin: Origin | None) -> Tensor:
    fixed = with_rank(tensor, len(order))
    if fixed is None:
        return UNKNOWN_TENSOR
    normalized = [normalize_dim(o, len(order)) for o in order]
    if None in normalized or sorted(normalized) != list(range(len(order))):  # type: ignore[type-var]
        return UNKNOWN_TENSOR
    return Tensor(tuple(fixed.dims[i] for i in normalized), False, tensor.dtype, origin)  # type: ignore[index]


def transpose(tensor: Tensor, first: int, second: int, origin: Origin | None) -> Tensor:
    if tensor.rank is None:
        if first < 0 and second < 0 and max(-first, -second) <= len(tensor.dims):
            dims = list(tensor.dims)
            dims[first], dims[second] = dims[second], dims[first]
            return Tensor(tuple(dims), True, tensor.dtype, origin)
        return UNKNOWN_TENSOR
    if tensor.rank == 0:
        return tensor
    a, b = normalize_dim(first, tensor.rank), normalize_dim(second, tensor.rank)
    if a is None or b is None:
        return UNKNOWN_TENSOR
    dims = list(tensor.dims)
    dims[a], dims[b] = dims[b], dims[a]
    return Tensor(tuple(dims), False, tensor.dtype, origin)


def movedim(tensor: Tensor, sources: Sequence[int], destinations: Sequence[int], origin: Origin | None) -> Tensor:
    if tensor.rank is None or len(sources) != len(destinations):
        return UNKNOWN_TENSOR
    rank = tensor.rank
    src = [normalize_dim(s, rank) for s in sources]
    dst = [normalize_dim(d, rank) for d in destinations]
    if None in src or None in dst or len(set(src)) != len(src) or len(set(dst)) != len(dst):
        return UNKNOWN_TENSOR
    result: list = [None] * rank
    filled = [False] * rank
    for s, d in zip(src, dst):
        result[d] = tensor.dims[s]
        filled[d] = True
    rest = iter(i for i in range(rank) if i not in src)
    for position in range(rank):
        if not filled[position]:
            result[position] = tensor.dims[next(rest)]
    return Tensor(tuple(result), False, tensor.dtype, origin)


def squeeze(tensor: Tensor, dims: Sequence[int] | None, origin: Origin | None) -> Tensor:
    if tensor.rank is None:
        return UNKNOWN_TENSOR
    if dims is None:
        if not tensor.fully_known or any(not d.is_int for d in tensor.dims):  # type: ignore[union-attr]
            return UNKNOWN_TENSOR  # a symbolic size may be 1
        return Tensor(tuple(d for d in tensor.dims if not is_one(d)), False, tensor.dtype, origin)
    if tensor.rank == 0:
        return tensor
    positions = set()
    for dim in dims:
        position = normalize_dim(dim, tensor.rank)
        if position is None:
            return UNKNOWN_TENSOR
        size = tensor.dims[position]
        if size is None or not size.is_int:
            return UNKNOWN_TENSOR
        if is_one(size):
            positions.add(position)
    kept = tuple(d for i, d in enumerate(tensor.dims) if i not in positions)
    return Tensor(kept, False, tensor.dtype, origin if positions else tensor.origin)


def unsqueeze(tensor: Tensor, dim: int, origin: Origin | None) -> Tensor:
    if tensor.rank is None:
        if dim < 0 and -dim <= len(tensor.dims) + 1:
            position = len(tensor.dims) + 1 + dim
            dims = tensor.dims[:position] + (ONE,) + tensor.dims[position:]
            return Tensor(dims, True, tensor.dtype, origin)
        return UNKNOWN_TENSOR
    position = normalize_dim(dim, tensor.rank, extra=1)
    if position is None:
        return UNKNOWN_TENSOR
    return Tensor(tensor.dims[:position] + (ONE,) + tensor.dims[position:], False, tensor.dtype, origin)


def expand(tensor: Tensor, sizes: Sequence[Dim | None | str], origin: Origin | None) -> Tensor:
    if tensor.rank is None and len(tensor.dims) > len(sizes):
        return UNKNOWN_TENSOR
    if tensor.rank is not None and tensor.rank > len(sizes):
        return UNKNOWN_TENSOR
    result: list[Dim | None] = []
    offset = len(sizes) - len(tensor.dims)
    for index, size in enumerate(sizes):
        old = tensor.dims[index - offset] if index >= offset else None
        if size == WILDCARD:
            if index < offset and tensor.rank is not None:
                return UNKNOWN_TENSOR  # -1 for a new leading dim raises; not a size mismatch
            result.append(old)
            continue
        # A symbolic size may be 1 at run time, and a 1 expands to anything: only a known one proves it.
        if old is not None and size is not None and old.is_int and not is_one(old) and surely_differ(old, size):  # type: ignore[arg-type]
            raise ShapeError("expand")
        result.append(size)  # type: ignore[arg-type]
    return Tensor(tuple(result), False, tensor.dtype, origin)


def repeat(tensor: Tensor, repeats: Sequence[Dim | None], origin: Origin | None) -> Tensor:
    if tensor.rank is None and len(tensor.dims) > len(repeats):
        return UNKNOWN_TENSOR
    if tensor.rank is not None and tensor.rank > len(repeats):
        return UNKNOWN_TENSOR
    offset = len(repeats) - len(tensor.dims)
    result: list[Dim | None] = []
    for index, times in enumerate(repeats):
        if index < offset:
            old = ONE if tensor.rank is not None else None
        else:
            old = tensor.dims[index - offset]
        result.append(old * times if old is not None and times is not None else None)
    return Tensor(tuple(result), False, tensor.dtype, origin)


# ------------------------------------------------------------- reductions
def reduce(tensor: Tensor, dims: Sequence[int] | None, keepdim: bool, origin: Origin | None,
           dtype: str | None = "keep") -> Tensor:
    kind = tensor.dtype if dtype == "keep" else dtype
    if dims is None:
        if keepdim and tensor.rank is not None:
            return Tensor((ONE,) * tensor.rank, False, kind, origin)
        return Tensor((), False, kind, origin) if not keepdim else UNKNOWN_TENSOR
    if tensor.rank is None:
        if all(d < 0 and -d <= len(tensor.dims) for d in dims):
            positions = {len(tensor.dims) + d for d in dims}
            kept = tuple(ONE if i in positions else d for i, d in enumerate(tensor.dims)
                         if keepdim or i not in positions)
            return Tensor(kept, True, kind, origin)
        return UNKNOWN_TENSOR
    positions = set()
    for dim in dims:
        position = normalize_dim(dim, tensor.rank) if tensor.rank else (0 if dim in (0, -1) else None)
        if position is None:
            return UNKNOWN_TENSOR
        positions.add(position)
    if tensor.rank == 0:
        return Tensor((), False, kind, origin)
    kept = tuple(ONE if i in positions else d for i, d in enumerate(tensor.dims) if keepdim or i not in positions)
    return Tensor(kept, False, kind, origin)


def resize_dim(tensor: Tensor, dim: int, size: Dim | None, origin: Origin | None, dtype: str | None = "keep") -> Tensor:
    """The tensor with dim `dim` set to `size` (`topk`, `index_select`, `glu`)."""
    kind = tensor.dtype if dtype == "keep" else dtype
    if tensor.rank is None:
        if dim < 0 and -dim <= len(tensor.dims):
            dims = list(tensor.dims)
            dims[dim] = size
            return Tensor(tuple(dims), True, kind, origin)
        return UNKNOWN_TENSOR
    position = normalize_dim(dim, tensor.rank)
    if position is None:
        return UNKNOWN_TENSOR
    dims = list(tensor.dims)
    dims[position] = size
    return Tensor(tuple(dims), False, kind, origin)


# ---------------------------------------------------------- cat and friends
def cat(tensors: Sequence[Tensor], dim: int, origin: Origin | None) -> Tensor:
    # torch.cat skips legacy empty 1-D tensors (`torch.tensor([])`, the start of a running
    # `y = torch.cat([y, batch])`): they fix neither the rank nor any size of the result.
    joined = [t for t in tensors if not _legacy_empty(t)]
    if not joined:
        return tensors[0]
    if len(joined) < len(tensors):
        if any(t.rank is None for t in joined):
            return UNKNOWN_TENSOR  # which rank the rest has is not known: nothing to keep
        tensors = joined
    rank = next((t.rank for t in tensors if t.rank is not None), None)
    if rank is None:
        if dim < 0:
            return _cat_suffix(tensors, dim, origin)
        return UNKNOWN_TENSOR
    shaped: list[Tensor] = []
    for tensor in tensors:
        fixed = with_rank(tensor, rank)
        if fixed is None:
            return UNKNOWN_TENSOR  # different ranks raise, but legacy empty 1-D tensors are allowed
        shaped.append(fixed)
    position = normalize_dim(dim, rank)
    if position is None:
        return UNKNOWN_TENSOR
    return Tensor(_joined_dims(shaped, range(rank), position), False, common_dtype(tensors), origin)


def _legacy_empty(tensor: Tensor) -> bool:
    """A 1-D tensor of size 0, which `torch.cat` leaves out whatever the others' rank."""
    return tensor.rank == 1 and concrete(tensor.dims[0]) == 0


def _cat_suffix(tensors: Sequence[Tensor], dim: int, origin: Origin | None) -> Tensor:
    width = min(len(t.dims) for t in tensors)
    if -dim > width:
        return UNKNOWN_TENSOR
    return Tensor(_joined_dims(tensors, range(-width, 0), dim), True, common_dtype(tensors), origin)


def _joined_dims(tensors: Sequence[Tensor], positions: range, joined: int) -> tuple[Dim | None, ...]:
    """The dims of `cat`'s result at these positions: the joined one adds up, the others must agree."""
    result: list[Dim | None] = []
    for position in positions:
        column = [t.dims[position] for t in tensors]
        result.append(known_sum(column) if position == joined else _agree(column, "cat"))
    return tuple(result)


def _agree(column: Sequence[Dim | None], what: str) -> Dim | None:
    """The one size several tensors must share along a dim; ShapeError when two surely differ."""
    known = [d for d in column if d is not None]
    for other in known[1:]:
        if surely_differ(known[0], other):
            raise ShapeError(what)
    concrete_known = [d for d in known if d.is_int]
    if concrete_known:
        return concrete_known[0]
    if known and all(d == known[0] for d in known) and len(known) == len(column):
        return known[0]
    return known[0] if known and len(set(known)) == 1 else None


def stack(tensors: Sequence[Tensor], dim: int, count: Dim | None, origin: Origin | None) -> Tensor:
    rank = next((t.rank for t in tensors if t.rank is not None), None)
    if rank is None:
        return UNKNOWN_TENSOR
    shaped = [with_rank(t, rank) for t in tensors]
    if any(t is None for t in shaped):
        return UNKNOWN_TENSOR
    common = tuple(_agree([t.dims[i] for t in shaped], "stack") for i in range(rank))  # type: ignore[union-attr]
    position = normalize_dim(dim, rank, extra=1)
    if position is None:
        return UNKNOWN_TENSOR
    return Tensor(common[:position] + (count,) + common[position:], False, common_dtype(tensors), origin)


def split_sizes(size: Dim | None, split: Dim) -> list[Dim] | None:
    """Sizes of `split(split_size)` along a dim of `size`, or None when the count is unknown."""
    if size is None:
        return None
    total, step = size.as_int(), split.as_int()
    if total is not None and step:
        count = -(-total // step)
        return [Dim.const(min(step, total - i * step)) for i in range(count)] if count <= MAX_UNBIND else None
    ratio = size.divide_exactly(split)
    if ratio is not None and ratio.is_int and 0 < ratio.as_int() <= MAX_UNBIND:
        return [split] * ratio.as_int()
    return None


def chunk_sizes(size: Dim | None, chunks: int) -> list[Dim] | None:
    if size is None or chunks <= 0:
        return None
    total = size.as_int()
    if total is not None:
        step = -(-total // chunks)
        return split_sizes(size, Dim.const(step)) if step else None
    part = size.divide_exactly(Dim.const(chunks))
    return [part] * chunks if part is not None and chunks <= MAX_UNBIND else None


def pieces(tensor: Tensor, dim: int, sizes: Sequence[Dim], origin: Origin | None) -> TupleValue | None:
    parts = []
    for size in sizes:
        part = resize_dim(tensor, dim, size, origin)
        if not part.has_shape:
            return None
        parts.append(part)
    return TupleValue(tuple(parts))


# ------------------------------------------------------------------ indexing
class Slice:
    """An abstract slice: start/stop/step as Dims (None when absent), `known` False when
    some bound is not a known size."""

    __slots__ = ("start", "stop", "step", "known")

    def __init__(self, start: Dim | None, stop: Dim | None, step: Dim | None, known: bool = True):
        self.start, self.stop, self.step, self.known = start, stop, step, known

    def length(self, size: Dim | None) -> Dim | None:
        if not self.known:
            return None
        start, stop, step = (concrete(x) if x is not None else None for x in (self.start, self.stop, self.step))
        if (self.start is not None and start is None) or (self.step is not None and step is None):
            return None
        total = concrete(size)
        if total is not None and (self.stop is None or stop is not None):
            return Dim.const(len(range(*slice(start, stop, step).indices(total))))
        if size is None:
            return None
        step = step or 1
        if step < 0:
            return None
        begin = start or 0
        if begin not in (0, 1) or (start is not None and start < 0):
            return None
        if self.stop is None:
            end = size
        elif stop is not None and stop < 0 and stop == -1:
            end = size - ONE
        elif self.stop == size:
            end = size
        else:
            return None
        length = end - Dim.const(begin)
        return length if step == 1 else (length + Dim.const(step - 1)).floordiv(Dim.const(step))


class _Marker:
    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name


ELLIPSIS = _Marker("...")  # `...` in an index
NEWAXIS = _Marker("None")  # `None` in an index
SOME_INT = _Marker("int")  # an int index whose value is unknown


def index(tensor: Tensor, items: Sequence, origin: Origin | None) -> Tensor:
    """`tensor[items]`; items are ints (Dim), Slice, NEWAXIS, ELLIPSIS, or Tensors (advanced).

    Raises ShapeError("index") for a constant index past a concrete size."""
    markers_at = [i for i, item in enumerate(items) if item is ELLIPSIS]
    if markers_at:
        cut = markers_at[0]
        head, tail = list(items[:cut]), list(items[cut + 1:])
    else:
        head, tail = list(items), []
    head_consumed = _consumed(head)
    tail_consumed = _consumed(tail)
    consumed = _consumed(items)
    if tensor.rank is None:
        if head_consumed:
            return UNKNOWN_TENSOR
        fixed = None
        rank_dims = tensor.dims
    else:
        if consumed > tensor.rank:
            return UNKNOWN_TENSOR
        fixed = tensor
        rank_dims = tensor.dims
    if fixed is not None:
        middle = rank_dims[head_consumed:len(rank_dims) - tail_consumed] if tail_consumed else rank_dims[head_consumed:]
        head_dims = rank_dims[:head_consumed]
        tail_dims = rank_dims[len(rank_dims) - tail_consumed:] if tail_consumed else ()
    else:
        if tail_consumed > len(rank_dims):
            return UNKNOWN_TENSOR
        middle = rank_dims[:len(rank_dims) - tail_consumed]
        head_dims = ()
        tail_dims = rank_dims[len(rank_dims) - tail_consumed:] if tail_consumed else ()
    head_out, head_adv = _apply_items(head, head_dims)
    tail_out, tail_adv = _apply_items(tail, tail_dims)
    if head_out is None or tail_out is None:
        return UNKNOWN_TENSOR
    if fixed is None and head_out:
        # Of a tensor of unknown rank only trailing sizes can be written ([*, a]): a leading
        # new axis (`x[None]` is [1, *, a]) has no place there, and [*, 1, a] would claim a
        # trailing 1 that is not there (`t[:, None] * freqs[None]` then broadcast to [*, n, 1]).
        # Nothing is consumed before the unknown part here, so dropping them leaves [*, a].
        if head_adv:
            return UNKNOWN_TENSOR
        head_out = []
    advanced = head_adv + tail_adv
    out = head_out + list(middle) + tail_out
    if advanced:
        shapes = [a[1] for a in advanced]
        try:
            joined = broadcast(shapes)
        except ShapeError:
            raise ShapeError("advanced") from None
        if joined.rank is None:
            return UNKNOWN_TENSOR
        markers = [i for i, d in enumerate(out) if d is _ADVANCED]
        contiguous = markers == list(range(markers[0], markers[0] + len(markers)))
        rest = [d for d in out if d is not _ADVANCED]
        at = markers[0] if contiguous else 0
        if not contiguous or not markers_at or fixed is not None:
            out = rest[:at] + list(joined.dims) + rest[at:]
        else:
            return UNKNOWN_TENSOR
    return Tensor(tuple(out), tensor.rank is None, tensor.dtype, origin)


_ADVANCED = object()


def _consumed(items: Sequence) -> int:
    """How many dims of the indexed tensor the index items take up."""
    total = 0
    for item in items:
        total += _consumes(item)
    return total


def _consumes(item) -> int:
    if item is ELLIPSIS or item is NEWAXIS:
        return 0
    if isinstance(item, Tensor) and item.dtype == "bool" and item.rank is not None:
        return item.rank
    return 1


def _apply_items(items: Sequence, dims: Sequence[Dim | None]) -> tuple[list | None, list]:
    out: list = []
    advanced: list = []
    position = 0
    for item in items:
        if item is NEWAXIS:
            out.append(ONE)
            continue
        if isinstance(item, Slice):
            out.append(item.length(dims[position]))
            position += 1
        elif isinstance(item, Dim):
            _check_index(item, dims[position], position)
            position += 1
        elif isinstance(item, Tensor):
            if item.dtype == "bool":
                if item.rank is None:
                    return None, []
                sizes = dims[position:position + item.rank]
                for own, size in zip(item.dims, sizes):
                    if surely_differ(own, size) and own is not None and own.is_int and size is not None and size.is_int:
                        raise ShapeError("mask")
                out.append(_ADVANCED)
                advanced.append((len(out) - 1, Tensor((None,))))
                position += item.rank
            elif item.dtype == "long":
                out.append(_ADVANCED)
                advanced.append((len(out) - 1, item))
                position += 1
            else:
                return None, []
        elif item is SOME_INT:
            position += 1
        else:
            return None, []
    return out, advanced


def _check_index(item: Dim, size: Dim | None, position: int) -> None:
    value, total = concrete(item), concrete(size)
    if value is not None and total is not None and not -total <= value < total:
        raise IndexPastSize(value, position, total)


class IndexPastSize(ShapeError):
    """A constant index past a concrete size: (index, position among the indexed dims, size)."""

    def __str__(self) -> str:
        return "index"

"""Names for sizes that differ between the call contexts of one function.

A block reused at several widths, or a `forward` called with two batch sizes, runs once
per call context.  Where the contexts agree on a size, that size is shown; where they
disagree, joining them would leave `?`.  Instead the size gets a name that stands for the
varying size, one value per call:

- the function's own (standalone) run names it, and that name provably has the context's
  size in every context (`in_channels`, `B` from `B, C, H, W = x.shape`, `in_channels//2`;
  each of its symbols is a whole dim somewhere in the function): that name;
- otherwise a name after the dim's role (`B` for the batch, `C`, `H`, `W`, `T`, `D`), shared
  by every dim of the function that has the same role and the same size in every context
  (the same size, provably, at every call the workspace makes), or an expression of an
  already named size (`H//2`).

A function some call of which went unrecorded (too many contexts) gets no names: its
sizes are not known to agree at that call.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from torch_lsp.shapes.dims import Dim, Symbol
from torch_lsp.shapes.values import Tensor

if TYPE_CHECKING:
    from torch_lsp.shapes.frame import Frame

Vector = tuple  # one size (Dim or None) per call context of the function, in frame order
ROLE_NAMES = {
    1: ("N",),
    2: ("B", "D"),
    3: ("B", "T", "C"),
    4: ("B", "C", "H", "W"),
    5: ("B", "C", "D", "H", "W"),
}
RELATED_FACTORS = range(2, 9)


class NamedSize:
    """A name given to a size that varies between call contexts."""

    __slots__ = ("name", "vector", "role")

    def __init__(self, name: str, vector: Vector, role: str):
        self.name = name
        self.vector = vector
        self.role = role


class ContextNames:
    """The names given to varying sizes in one function (built on first use, then grown)."""

    def __init__(self, contexts: Sequence["Frame"], standalone: Sequence["Frame"]):
        self.contexts = list(contexts)
        self.position = {id(frame): index for index, frame in enumerate(self.contexts)}
        self.standalone = list(standalone)
        self.by_key: dict[tuple[str, Vector], NamedSize] = {}
        self.named: list[NamedSize] = []
        self.taken = _program_symbols(self.contexts + self.standalone)
        self._bindings: list[dict[str, Dim | None]] | None = None

    def origin_of(self, name: str) -> NamedSize | None:
        return next((n for n in self.named if n.name == name), None)

    # -- what the standalone run's symbols stand for in each context --------------------------
    @property
    def bindings(self) -> list[dict[str, Dim | None]]:
        """Per context: the size each single-symbol dim of the standalone run has there (None
        where two nodes disagree)."""
        if self._bindings is None:
            self._bindings = [{} for _ in self.contexts]
            for alone in self.standalone:
                for node, general in alone.values.items():
                    if general.__class__ is not Tensor:
                        continue
                    for index, frame in enumerate(self.contexts):
                        specific = frame.values.get(node)
                        if specific.__class__ is Tensor:
                            _bind(self._bindings[index], general, specific)
        return self._bindings

    def consistent(self, expression: Dim, vector: Vector) -> bool | None:
        """True when the standalone run's `expression` has the context's size in every context,
        False when it surely differs in one, None when some symbol is not known there."""
        unknown = False
        for bindings, size in zip(self.bindings, vector):
            if size is None:
                continue
            mapping = {}
            for name in expression.symbols():
                value = bindings.get(name)
                if value is None:
                    unknown = True
                    break
                mapping[name] = value
            else:
                if expression.substitute(mapping) != size:
                    return False
        return None if unknown else True

    # -- naming ---------------------------------------------------------------------------
    def tensor(self, frames: Sequence["Frame"], values: Sequence[Tensor], alone: Tensor | None) -> Tensor | None:
        """The shape to show for a node whose contexts (`frames`, with these `values`, all of
        one rank) disagree on some size; None when they are not all of one known rank."""
        rank = values[0].rank
        if rank is None or any(v.rank != rank for v in values):
            return None
        slots = [self.position.get(id(f)) for f in frames]
        if any(s is None for s in slots):
            return None
        dims = []
        for index in range(rank):
            vector: list = [None] * len(self.contexts)
            for slot, value in zip(slots, values):
                vector[slot] = value.dims[index]
            sizes = {d for d in vector if d is not None}
            if len(sizes) == 1 and all(d is not None for d in (v.dims[index] for v in values)):
                dims.append(next(iter(sizes)))
                continue
            if any(v.dims[index] is None for v in values):
                dims.append(None)
                continue
            dims.append(self._name(tuple(vector), index, rank, _aligned(alone, index, rank)))
        return Tensor(tuple(dims), False, values[0].dtype if all(v.dtype == values[0].dtype for v in values) else None,
                      values[0].origin if all(v.origin == values[0].origin for v in values) else None)

    def _name(self, vector: Vector, index: int, rank: int, general: Dim | None) -> Dim:
        if general is not None and not general.is_int and self.consistent(general, vector) is True:
            return general
        role = _role(index, rank)
        found = self.by_key.get((role, vector)) or next(
            (n for n in self.named if n.role == role and _agree(n.vector, vector)), None)
        if found is not None:
            return Dim.symbol(found.name)
        related = self._related(vector, role)
        if related is not None:
            return related
        name = role
        counter = 1
        while name in self.taken:
            counter += 1
            name = f"{role}{counter}"
        self.taken.add(name)
        named = NamedSize(name, vector, role)
        self.by_key[(role, vector)] = named
        self.named.append(named)
        return Dim.symbol(name)

    def _related(self, vector: Vector, role: str) -> Dim | None:
        """An expression of a size already named that has this size in every context (`H//2`, `2*C`)."""
        pairs_of = [(n, [(a.as_int(), b.as_int()) for a, b in zip(n.vector, vector) if a is not None and b is not None])
                    for n in sorted(self.named, key=lambda n: n.role != role)]
        for named, pairs in pairs_of:
            if not pairs or any(a is None or b is None for a, b in pairs):
                continue
            symbol = Dim.symbol(named.name)
            for factor in RELATED_FACTORS:
                if all(b == a // factor for a, b in pairs) and all(a >= factor for a, _ in pairs):
                    return symbol.floordiv(Dim.const(factor))
                if all(b == a * factor for a, b in pairs):
                    return symbol.scale(factor)
        return None


def _agree(a: Vector, b: Vector) -> bool:
    """Equal in every context where both are known, and both known in one at least."""
    pairs = [(x, y) for x, y in zip(a, b) if x is not None and y is not None]
    return bool(pairs) and all(x == y for x, y in pairs)


def _role(index: int, rank: int) -> str:
    names = ROLE_NAMES.get(rank)
    if names is not None:
        return names[index]
    return "B" if index == 0 else f"D{index}"


def _aligned(alone: Tensor | None, index: int, rank: int) -> Dim | None:
    """The standalone run's size of dim `index` of a rank-`rank` tensor (trailing dims align)."""
    if alone is None or alone.__class__ is not Tensor:
        return None
    if alone.rank is not None and alone.rank != rank:
        return None
    offset = rank - len(alone.dims)
    if offset < 0 or index < offset:
        return None
    return alone.dims[index - offset]


def _bind(bindings: dict[str, Dim | None], general: Tensor, specific: Tensor) -> None:
    if specific.rank is None:
        return
    offset = specific.rank - len(general.dims)
    if offset < 0 or (general.rank is not None and general.rank != specific.rank):
        return
    for index, dim in enumerate(general.dims):
        if dim is None or len(dim.terms) != 1:
            continue
        monomial, coefficient = dim.terms[0]
        if coefficient != 1 or len(monomial) != 1 or not isinstance(monomial[0], Symbol):
            continue
        size = specific.dims[index + offset]
        name = monomial[0].name
        if name in bindings and bindings[name] != size:
            bindings[name] = None
        elif name not in bindings:
            bindings[name] = size


def _program_symbols(frames: Sequence["Frame"]) -> set[str]:
    """Symbols the program's own sizes use in these frames (role names must not clash with them)."""
    found: set[str] = set()
    for frame in frames:
        for value in frame.values.values():
            if value.__class__ is Tensor:
                for dim in value.dims:
                    if dim is not None and not dim.is_int:
                        found |= dim.symbols()
    return found

"""The one cache of facts that modules beyond `analysis` compute about a version.

`analysis.facts.get_or_compute(KEY, compute)` runs `compute` once per analysed version
and hands back the same value after that.  Each fact has a typed `FactKey`, owned by
the module that computes it (the shape report in `shapes`, the `nn.Module` classes in
`roles`), so no code writes attributes onto an `Analysis` from outside and a reader
knows where every cached fact comes from.  Releasing a version pops what it no longer
needs (`release_shapes`).
"""
from __future__ import annotations

from typing import Any, Callable, Generic, TypeVar

T = TypeVar("T")


class FactKey(Generic[T]):
    """The name of one cached fact; `T` is the type of its value."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"FactKey({self.name!r})"


class FactCache:
    """Facts about one analysed version, computed on first use."""

    def __init__(self) -> None:
        self._values: dict[FactKey[Any], Any] = {}

    def get_or_compute(self, key: FactKey[T], compute: Callable[[], T]) -> T:
        if key in self._values:
            return self._values[key]
        value = self._values[key] = compute()
        return value

    def peek(self, key: FactKey[T]) -> T | None:
        """The fact if something already computed it, else None (never computes)."""
        return self._values.get(key)

    def pop(self, key: FactKey[T]) -> T | None:
        """Forget the fact (the caller then holds the only reference the cache had)."""
        return self._values.pop(key, None)

"""Module-level memos, and emptying them all once the server holds no document.

A few modules keep memos that outlive a check: size arithmetic and symbols
(`shapes.dims`), shared constant values (`shapes.expressions`), compiled comment patterns
(`shapes.stated`), layer names (`shapes.syntax`), masked notebook cells
(`notebook_magics`).  Each is bounded, but its entries were made during checks, so they
lie scattered through memory that the analyses of those checks filled and freed.
Python's allocator gives an arena (1 MiB) back to the system only once every object in it
is gone: a few memo entries in each arena kept most of the memory of closed documents
resident (20 closed 2,000-line documents: 242 MiB held, 157 MiB once the size memos were
emptied).  CPython's method-lookup cache does the same with the attribute names it
keeps (134 MiB, then 95 MiB).  So when the last document closes, the server empties them
all (`forget_all`, on its analysis thread); the next check fills them again.

A module registers its memo where it defines it: `memos.register(_SUMS.clear)`.  Every
registered memo must be a pure memo: emptying it may cost time, never change a result.
"""
from __future__ import annotations

import re
import sys
import urllib.parse
from typing import Callable

_CLEARS: list[Callable[[], None]] = []


def register(*clears: Callable[[], None]) -> None:
    """Empty these memos (each a function without arguments, such as `dict.clear`) in `forget_all`."""
    _CLEARS.extend(clears)


def forget_all() -> None:
    """Empty every registered memo, the compiled patterns `re` keeps, the URLs `urllib`
    split, and the interpreter's method-lookup cache."""
    for clear in _CLEARS:
        clear()
    re.purge()
    forget_urls = getattr(urllib.parse.urlsplit, "cache_clear", None)  # an `lru_cache` from Python 3.11 on
    if forget_urls is not None:
        forget_urls()
    # `_clear_internal_caches` from Python 3.13 on (which deprecates `_clear_type_cache`).
    clear_type_cache = getattr(sys, "_clear_internal_caches", None) or getattr(sys, "_clear_type_cache", None)
    if clear_type_cache is not None:
        clear_type_cache()

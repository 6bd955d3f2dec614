"""The fixes of the rules: one module per rule code that has a fix, `tlNNN_<what_it_does>.py`
(`ls server/codeactions/fixes/tl302*` finds TL302's).

Each module registers its fixer with `@fixer("TLNNN")` (`torch_lsp.codeactions.registry`);
importing this package imports them all.  The machinery they share (locating nodes,
`Rewrite`, imports, names, call edits) lives one level up, in `torch_lsp.codeactions`.
"""
from __future__ import annotations

import importlib
import pkgutil


def _import_fix_modules() -> None:
    for module in sorted(info.name for info in pkgutil.iter_modules(__path__)):
        importlib.import_module(f"{__name__}.{module}")


_import_fix_modules()

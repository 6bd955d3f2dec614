"""One convention for where a fix lives: `server/codeactions/fixes/tlNNN_<what_it_does>.py`,
one module per rule code that has a fix, holding that code's fixer and nothing else."""
from __future__ import annotations

import re
from pathlib import Path

import torch_lsp.codeactions.fixes
from torch_lsp.codeactions import fixable_codes
from torch_lsp.codeactions.registry import FIXERS

FIXES = Path(torch_lsp.codeactions.fixes.__file__).parent
MODULE_NAME = re.compile(r"(tl\d{3})_[a-z0-9_]+")


def test_fixes_holds_one_module_per_fixable_rule_code():
    names = sorted(path.stem for path in FIXES.glob("*.py") if path.stem != "__init__")
    assert all(MODULE_NAME.fullmatch(name) for name in names), names
    codes = [MODULE_NAME.fullmatch(name).group(1).upper() for name in names]
    assert len(codes) == len(set(codes)), f"two modules for one code: {names}"
    assert set(codes) == fixable_codes()


def test_each_fixer_lives_in_the_module_named_after_its_code():
    for code in fixable_codes():
        module = FIXERS[code].__module__
        assert module.startswith(f"torch_lsp.codeactions.fixes.{code.lower()}_"), f"{code}'s fixer is in {module}"

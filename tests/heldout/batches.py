"""The three tests every held-out batch of marked files runs, made once for each batch's test
module: every family has files, the batch's markers probe exactly its rules, and each file
scores perfectly (`assert_scores_perfectly`, the known misses aside)."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from tests.heldout.test_heldout_b_families import assert_scores_perfectly
from tests.rules.markers import read_markers


def batch_tests(here: Path, marked: tuple[str, ...], clean: tuple[str, ...], rules: set[str],
                known_misses: dict[tuple[str, int, str], str]) -> tuple[Callable, Callable, Callable]:
    """The batch's tests, for its module to bind under pytest's names (see the batch modules)."""
    files = sorted(p for family in marked + clean for p in (here / family).glob("*.py"))

    def test_there_are_files_in_every_family():
        for family in marked + clean:
            assert list((here / family).glob("*.py")), family

    def test_every_rule_of_the_families_is_probed():
        probed = {code for p in files if p.parent.name in marked for codes in read_markers(p)[0].values()
                  for code in codes}
        assert probed == rules

    @pytest.mark.parametrize("path", files, ids=lambda p: f"{p.parent.name}/{p.stem}")
    def test_file_scores_perfectly(path: Path):
        assert_scores_perfectly(path, clean, known_misses)

    return test_there_are_files_in_every_family, test_every_rule_of_the_families_is_probed, test_file_scores_perfectly

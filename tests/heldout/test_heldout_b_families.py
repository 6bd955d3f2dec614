"""Held-out-style marked files for TL4xx, TL501/TL503, TL601 and TL7xx, plus clean scripts,
scored as ../shared/tools/score_rules.py scores the shared corpus: every `# expect:` marker
reported on its line, nothing on a `# clean` or unmarked line (any code), matched by
(file, line, code). Recall and precision must both be 1.0."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from torch_lsp.checker import check_source
from torch_lsp.settings import Settings
from tests.rules.markers import read_markers
from tests.rules.test_fixtures import FIXTURE_TORCH_VERSION

HERE = Path(__file__).parent
FAMILIES = ("performance", "compile", "api", "shapes", "clean_b")
FILES = sorted(p for family in FAMILIES for p in (HERE / family).glob("*.py"))


def score_file(path: Path) -> tuple[set, set]:
    """(missed (line, code), false (line, code)) of one file, at a fixed target version:
    the TL7xx advice would otherwise follow whatever torch sits above the checkout."""
    settings = replace(Settings(), torch_version=FIXTURE_TORCH_VERSION)
    result = check_source(path.read_text(encoding="utf-8"), str(path), settings)
    found = {(f.line, f.code) for f in result.findings}
    expects, _ = read_markers(path)
    expected = {(line, code) for line, codes in expects.items() for code in codes}
    return expected - found, found - expected


def assert_scores_perfectly(path: Path, clean_families: tuple[str, ...],
                            known_misses: dict[tuple[str, int, str], str] | None = None) -> None:
    """A clean script carries no markers and gets no finding; a marked file has expect lines
    and near misses and gets exactly its expect lines, but for the `known_misses` (file, line,
    code), which must still be missed (the fix that finds one removes it from the list)."""
    expects, cleans = read_markers(path)
    if path.parent.name in clean_families:
        assert not expects and not cleans, "a clean script carries no markers"
    else:
        assert expects and cleans, "a marked file has expect lines and near misses"
    missed, false = score_file(path)
    known = {(line, code) for (name, line, code) in (known_misses or {}) if name == f"{path.parent.name}/{path.name}"}
    assert sorted(false) == [], "false findings (line, code)"
    assert sorted(missed - known) == [], "missed findings (line, code)"
    assert sorted(known - missed) == [], "found now: remove it from KNOWN_MISSES"


def test_there_are_files_in_every_family():
    for family in FAMILIES:
        assert list((HERE / family).glob("*.py")), family


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_file_scores_perfectly(path: Path):
    assert_scores_perfectly(path, ("clean_b",))

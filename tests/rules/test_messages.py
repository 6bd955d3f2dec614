"""Pinned output: what each rule reports on its fixture, compared exactly.

`tests/rules/fixtures/TLxxx.txt` holds, for every finding of the rule on
`TLxxx.py` (only that rule selected), the line the user reads:

    LINE:COLUMN-END_LINE:END_COLUMN CODE message
        fix (safety): title

with 1-based lines and code-point columns, as `torch-lsp check` prints them.  A changed
message, range or fix title fails here; when the change is intended, regenerate the
files with `TORCH_LSP_UPDATE_EXPECTED=1 pytest tests/rules/test_messages.py` and
review the diff.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from torch_lsp.reporting import problems_of
from tests.rules.test_fixtures import RULE_FIXTURES, checked

UPDATE = os.environ.get("TORCH_LSP_UPDATE_EXPECTED") == "1"


def reported_text(fixture: Path) -> str:
    code = fixture.stem
    result = checked(fixture, code)
    lines = []
    for problem in problems_of(result, fixture.name):
        if problem.code != code:
            continue
        lines.append(f"{problem.line}:{problem.column}-{problem.end_line}:{problem.end_column} "
                     f"{problem.code} {problem.message}")
        if problem.fix is not None:
            lines.append(f"    fix ({problem.fix.safety}): {problem.fix.title}")
    return "".join(line + "\n" for line in lines)


@pytest.mark.parametrize("fixture", RULE_FIXTURES, ids=lambda p: p.stem)
def test_reported_output_is_pinned(fixture: Path):
    expected_file = fixture.with_suffix(".txt")
    actual = reported_text(fixture)
    if UPDATE:
        expected_file.write_text(actual, encoding="utf-8")
    assert expected_file.exists(), f"{expected_file.name} is missing: run with TORCH_LSP_UPDATE_EXPECTED=1"
    assert actual == expected_file.read_text(encoding="utf-8")


def test_every_pinned_file_has_its_fixture():
    fixtures = {p.stem for p in RULE_FIXTURES}
    stray = [p.name for p in RULE_FIXTURES[0].parent.glob("TL*.txt") if p.stem not in fixtures]
    assert stray == []

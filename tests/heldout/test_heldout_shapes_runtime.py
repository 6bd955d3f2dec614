"""The held-out TL501/TL503 files are definite errors for real: every `case_*` function runs with
torch; a case with an `expect` line must raise on that line, a case with only `clean` lines
must run (the same contract as tests/shapes/test_definite_errors_runtime.py)."""
from __future__ import annotations

import traceback
from pathlib import Path

import pytest

from tests.rules.markers import read_markers
from tests.shapes.conftest import require_torch
from tests.shapes.test_definite_errors_runtime import cases, load_fixture

FILES = sorted((Path(__file__).resolve().parent / "shapes").glob("*.py"))
ALL_CASES = [(path, *case) for path in FILES for case in cases(path)]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_marker_belongs_to_a_case(path):
    expects, cleans = read_markers(path)
    covered = set()
    for _, expect_lines, clean_lines in cases(path):
        covered |= expect_lines | clean_lines
    assert set(expects) | cleans <= covered


@pytest.mark.parametrize("path, name, expect_lines, clean_lines", ALL_CASES,
                         ids=[f"{c[0].stem}-{c[1]}" for c in ALL_CASES])
def test_case_raises_exactly_where_marked(path, name, expect_lines, clean_lines):
    require_torch()
    function = getattr(load_fixture(path), name)
    if not expect_lines:
        function()  # a near miss must run
        return
    with pytest.raises((RuntimeError, IndexError, ValueError)) as raised:
        function()
    frames = traceback.extract_tb(raised.value.__traceback__)
    lines = {f.lineno for f in frames if Path(f.filename).resolve() == path}
    assert lines & expect_lines, f"{name} raised {raised.value!r} away from its marked line {sorted(expect_lines)}"

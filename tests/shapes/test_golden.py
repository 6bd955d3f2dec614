"""Golden shape fixtures: every `# infer:` marker of tests/shapes/fixtures/*.py matches the
static shapes (`torch-lsp shapes` records), and the fixtures' shapes are right at run time.

The static pass reads each fixture without its `if __name__ == "__main__":` block (the
calls there only feed the runtime check), so the markers describe what the functions
themselves say; call-site propagation is tested with calls inside the fixtures."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from torch_lsp.analysis import analyze
from torch_lsp.shapes import WorkspaceResolver, infer_shapes
from torch_lsp.shapes.listing import shape_records
from tests.shapes.conftest import require_torch
from tests.shapes.golden import UNNAMED, read_expectations
from tests.shapes.truth import without_main_block

FIXTURES = sorted((Path(__file__).parent / "fixtures").glob("*.py"))


def _static(path: Path) -> list[dict]:
    analysis = analyze(without_main_block(path.read_text(encoding="utf-8")), str(path))
    return shape_records(analysis, infer_shapes(analysis, WorkspaceResolver()))


def _records(path: Path) -> dict[int, list[dict]]:
    by_line: dict[int, list[dict]] = {}
    for record in _static(path):
        by_line.setdefault(record["line"], []).append(record)
    return by_line


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.stem)
def test_markers_match_static_shapes(fixture: Path):
    expectations = read_expectations(fixture)
    assert expectations, f"{fixture.name} has no `# infer:` marker"
    records = _records(fixture)
    problems = []
    for line, wanted in sorted(expectations.items()):
        found = records.get(line, [])
        for name, dims in wanted.items():
            if name == UNNAMED:
                candidates = [r for r in found]
                got = candidates[-1]["shape"] if len(candidates) == 1 else [r["shape"] for r in candidates]
            else:
                named = [r["shape"] for r in found if r["name"] == name]
                got = named[0] if len(named) == 1 else (None if not named else named)
            if got != dims:
                problems.append(f"{fixture.name}:{line}: {name or 'the binding'} expected {dims}, got {got}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.stem)
def test_fixture_shapes_are_right_at_run_time(fixture: Path):
    require_torch()
    from tests.shapes.truth import record_runtime_shapes, score

    sys.path.insert(0, str(fixture.parent))  # fixtures import each other
    try:
        runtime = record_runtime_shapes(fixture)
    finally:
        sys.path.remove(str(fixture.parent))
    result = score(_static(fixture), runtime, per_file=False, label=fixture.stem)
    assert result.wrong == []

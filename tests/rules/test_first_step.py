"""The server publishes in two steps: every rule that does not read the shape pass first,
then the shape rules once the shape pass (the costliest fact) has run.  A rule that reads
the shape pass without declaring `needs_shapes` runs the whole pass in the first step and
delays it (TL409 did: with every rule selected, 632 ms instead of 336 for 2,000 lines)."""
from __future__ import annotations

from pathlib import Path

import pytest

from torch_lsp.checker import check_source
from torch_lsp.diagnostics import all_rules
from torch_lsp.settings import Selection, Settings
from torch_lsp.shapes import shapes_if_inferred

REPO = Path(__file__).resolve().parents[2]
SOURCES = sorted((REPO / "tests" / "rules" / "fixtures").glob("*.py")) + sorted((REPO / "examples").glob("*.py"))
EVERY_RULE = Settings().with_selection(Selection(select=tuple(all_rules())))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_the_first_step_runs_no_shape_pass(path):
    result = check_source(path.read_text(encoding="utf-8"), str(path), EVERY_RULE, shapes=False)
    assert shapes_if_inferred(result.analysis) is None, "a rule without `needs_shapes` ran the shape pass"

"""Golden fixtures: every rule against its own `tests/rules/fixtures/TLxxx.py`.

Each fixture is checked with only its rule selected, so the markers describe that rule
exactly: every `# expect: TLxxx` line is reported, nothing else is.
"""
from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

from torch_lsp.checker import add_probe_findings, check_source
from torch_lsp.diagnostics import all_rules
from torch_lsp.diagnostics.base import SEVERITIES
from torch_lsp.settings import Selection, Settings
from torch_lsp.shapes import infer_shapes
from torch_lsp.shapes.probe.client import ProbeOptions
from torch_lsp.shapes.probe.session import ProbeSession
from tests.rules.markers import read_markers
from tests.shapes.conftest import require_torch

FIXTURES = Path(__file__).parent / "fixtures"
RULE_FIXTURES = sorted(p for p in FIXTURES.glob("TL*.py") if p.stem in all_rules())


FIXTURE_TORCH_VERSION = "2.13"


def checked(path: Path, code: str):
    """The check of a fixture with only `code` selected; a rule that reads the shape probe's
    report (TL502) gets the file probed first, with this interpreter's torch."""
    # A fixed target version: the version-aware rules (TL7xx) would otherwise read the torch
    # installed in whatever environment sits above the fixtures.
    settings = replace(Settings(), torch_version=FIXTURE_TORCH_VERSION).with_selection(Selection(select=(code,)))
    result = check_source(path.read_text(encoding="utf-8"), str(path), settings)
    if all_rules()[code].needs_probe:
        require_torch()
        session = ProbeSession(str(path.parent), editor_python=sys.executable)
        try:
            session.probe(result.analysis, infer_shapes(result.analysis), ProbeOptions(python=sys.executable))
        finally:
            session.close()
        result = add_probe_findings(result, settings)
    return result


def _findings(path: Path, code: str):
    return [f for f in checked(path, code).findings if f.code == code]


@pytest.mark.parametrize("fixture", RULE_FIXTURES, ids=lambda p: p.stem)
def test_fixture_matches_markers(fixture: Path):
    code = fixture.stem
    expects, cleans = read_markers(fixture)
    expected = {line for line, codes in expects.items() if code in codes}
    assert expected, f"{fixture.name} has no `# expect: {code}` marker"
    assert cleans, f"{fixture.name} has no `# clean` near miss"
    reported = {f.line for f in _findings(fixture, code)}
    assert sorted(reported - expected) == [], "false positives"
    assert sorted(expected - reported) == [], "missed findings"


@pytest.mark.parametrize("fixture", RULE_FIXTURES, ids=lambda p: p.stem)
def test_findings_are_well_formed(fixture: Path):
    code = fixture.stem
    rule = all_rules()[code]
    lines = fixture.read_text(encoding="utf-8").splitlines()
    for finding in _findings(fixture, code):
        # A rule may lower a finding below its default where the catalogue says so (TL705 from 2.6).
        assert SEVERITIES.index(finding.severity) >= SEVERITIES.index(rule.severity), finding
        assert finding.message.endswith((".", ")")) and len(finding.message) > 40, finding.message
        # The range is the offending expression, not the whole line.
        text = lines[finding.line - 1]
        if finding.end_line == finding.line:
            assert finding.end_col > finding.col
            assert (finding.col, finding.end_col) != (0, len(text.encode())), "range covers the whole line"
        if rule.fix_safety in ("safe", "unsafe"):
            # A safe rule may offer a fix as unsafe where it cannot prove it (never the reverse),
            # or none for a form its fixer does not rewrite (its docstring says which).
            assert finding.fix is None or finding.fix.safety in (rule.fix_safety, "unsafe"), finding
        else:
            assert finding.fix is None

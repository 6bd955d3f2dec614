"""The rules pass of a check that is no longer wanted (the user typed past its version)
stops between two rules, as the shape pass does every few thousand steps: the server's
one analysis thread then starts the newest version's check without finishing it."""
from __future__ import annotations

from pathlib import Path

import pytest

from torch_lsp.analysis import analyze
from torch_lsp.diagnostics import run_rules
from torch_lsp.shapes.limits import Superseded, stopping_when

SCRIPT = (Path(__file__).resolve().parents[2] / "examples" / "cifar10_cnn.py")


def _findings(findings) -> list[tuple]:
    return [(f.code, f.line, f.col, f.message) for f in findings]


def test_the_rules_stop_once_their_check_is_no_longer_wanted():
    analysis = analyze(SCRIPT.read_text(encoding="utf-8"), str(SCRIPT))
    asked = []

    def stop() -> bool:
        asked.append(True)
        return len(asked) > 3  # wanted for three rules, then typed past

    with stopping_when(stop), pytest.raises(Superseded):
        run_rules(analysis)
    assert len(asked) == 4


def test_rules_still_wanted_give_the_same_findings():
    source = SCRIPT.read_text(encoding="utf-8")
    with stopping_when(lambda: False):
        asked = run_rules(analyze(source, str(SCRIPT)))
    alone = run_rules(analyze(source, str(SCRIPT)))
    assert asked and _findings(asked) == _findings(alone)

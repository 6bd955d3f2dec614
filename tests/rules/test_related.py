"""Findings that depend on something resolved elsewhere point at it (relatedInformation, JSON, SARIF)."""
from __future__ import annotations

import json

from torch_lsp.checker import check_source
from torch_lsp.diagnostics import all_rules
from torch_lsp.protocol import to_diagnostic
from torch_lsp.reporting import problems_of, render_json, render_sarif
from torch_lsp.settings import Selection, Settings

SOURCE = '''import torch
import torch.nn.functional as F


def main(model, loader):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        F.mse_loss(model(x), y).backward()
        optimizer.step()
'''


def _result():
    return check_source(SOURCE, "train.py", Settings().with_selection(Selection(select=("TL101",))))


def test_tl101_points_at_the_optimizer():
    (finding,) = _result().findings
    (related,) = finding.related
    assert (related.path, related.line, related.col) == (None, 6, 16)
    assert "constructed here" in related.message


def test_lsp_diagnostic_carries_related_information():
    result = _result()
    diagnostic = to_diagnostic(result.findings[0], result.analysis.lines, "utf-16", "file:///w/train.py")
    (info,) = diagnostic.related_information
    assert info.location.uri == "file:///w/train.py"
    assert (info.location.range.start.line, info.location.range.start.character) == (5, 16)


def test_json_and_sarif_show_related_places():
    problems = problems_of(_result(), "train.py")
    (entry,) = json.loads(render_json(problems, all_rules()))
    assert entry["related"][0]["line"] == 6 and entry["related"][0]["column"] == 17
    sarif = json.loads(render_sarif(problems, all_rules()))
    (location,) = sarif["runs"][0]["results"][0]["relatedLocations"]
    assert location["physicalLocation"]["region"]["startLine"] == 6

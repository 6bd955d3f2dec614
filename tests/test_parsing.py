"""Half-typed code: a syntax error is reported and the rest of the file keeps its findings."""
from __future__ import annotations

import textwrap

import pytest

from torch_lsp.checker import check_source
from torch_lsp.parsing import parse_source

TRAINING = textwrap.dedent(
    """
    import torch
    import torch.nn as nn


    def wrap(model):
        return nn.DataParallel(model)


    def typing_now(model, x):
        out = model(
    {broken}


    def later(model):
        return nn.DataParallel(model)
    """
)


@pytest.mark.parametrize(
    "broken",
    [
        "",  # unclosed call
        "    for x in loader",  # missing colon, body follows
        "    loss.",  # trailing dot
        "    s = 'unterminated",
        "    if x:",  # block header with no body
        "        return x +",
    ],
)
def test_findings_survive_a_syntax_error(broken):
    source = TRAINING.replace("{broken}", broken)
    findings = check_source(source, "half_typed.py").findings
    codes = [f.code for f in findings]
    assert "syntax-error" in codes
    lines = {f.line for f in findings if f.code == "TL406"}
    # both DataParallel calls, before and after the broken function
    assert lines == {7, 16}, findings


def test_syntax_error_is_a_sentence_with_a_precise_range():
    source = "import torch\nx = torch.zeros(3\ny = 1\n"
    issue = check_source(source, "f.py").findings[0]
    assert issue.code == "syntax-error" and issue.severity == "error"
    assert issue.message.startswith("Syntax error: ") and issue.message.endswith(".")
    assert issue.line == 2
    assert issue.end_col > issue.col


def test_columns_elsewhere_stay_valid_after_recovery():
    source = "import torch\nbad = (\nx = torch.nn.DataParallel(m)\n"
    tree, issues = parse_source(source)
    assert issues
    calls = [n for n in __import__("ast").walk(tree) if type(n).__name__ == "Call"]
    assert any(c.lineno == 3 and c.col_offset == 4 for c in calls)


def test_garbage_never_raises():
    for source in ["\x00\x00", "def (:\n" * 50, ")" * 5000, "é" * 10000, "\t\tif", "class A(:\n  pass"]:
        check_source(source, "junk.py")

"""Property tests (hypothesis, derandomized: the same examples on every run, in CI) over
analysis, shapes and fixes, on real-looking files edited the way people type
(`tests/robustness/mutations.py`).

- Whatever the text: no exception escapes `check_source`, the shape report or the code
  actions; every finding, hover and inlay hint lies inside the document; every code
  action's edits lie inside it, and a file that parsed still parses after any of them.
- One mistake in one function: exactly one syntax-error finding, and the findings and
  hovers of the other functions are what they were.
"""
from __future__ import annotations

import ast
import logging

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.robustness.mutations import KINDS, SOURCES, apply_all, read
from torch_lsp.checker import SYNTAX_ERROR_CODE, check_source
from torch_lsp.codeactions import actions_for, apply_edits, build_fix, fix_offers_at
from torch_lsp.parsing import parses
from torch_lsp.shapes import infer_shapes
from torch_lsp.text import LineIndex

BOUNDED = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

MAX_FINDINGS_FIXED = 3  # building fixes is the slow part (libcst); a few per example keeps CI quick
mutation = st.tuples(st.sampled_from(KINDS), st.floats(0, 1, exclude_max=True), st.integers(0, 999))
edited_files = st.tuples(st.sampled_from(SOURCES), st.lists(mutation, min_size=1, max_size=6))


@pytest.fixture(autouse=True)
def nothing_logged_as_an_error(caplog):
    """A fixer that raises, or a fix that would break the file, is logged and left out;
    here either is a failure."""
    with caplog.at_level(logging.ERROR):
        yield
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR and r.name.startswith("torch_lsp")]
    assert not errors, errors


def inside(lines: LineIndex, line: int, col: int) -> bool:
    """(1-based line, UTF-8 byte column) is a place in the document."""
    return 1 <= line <= len(lines.lines) and 0 <= col <= len(lines.line_text(line).encode("utf-8"))


def assert_range_inside(lines: LineIndex, what, line, col, end_line, end_col) -> None:
    assert inside(lines, line, col) and inside(lines, end_line, end_col), f"{what} out of the document"
    assert (line, col) <= (end_line, end_col), f"{what} ends before it starts"


@BOUNDED
@given(edited_files)
def test_any_edit_leaves_analysis_shapes_and_fixes_sound(edited):
    path, mutations = edited
    text = apply_all(read(path), mutations)
    result = check_source(text, str(path))
    lines = result.analysis.lines
    for finding in result.findings:
        assert_range_inside(lines, finding, finding.line, finding.col, finding.end_line, finding.end_col)

    report = infer_shapes(result.analysis)
    for hint in report.inlay_hints():
        assert inside(lines, hint.line, hint.col), hint
    for line in range(1, len(lines.lines) + 1, 7):
        for col in (0, 4, 10_000):
            answer = report.hover(line, col)
            if answer is not None:
                assert_range_inside(lines, answer, answer.line, answer.col, answer.end_line, answer.end_col)

    parsed = parses(text)
    for finding in result.findings[:MAX_FINDINGS_FIXED]:
        span = (finding.line, finding.col, finding.end_line, finding.end_col)
        built = [build_fix(result.analysis, result.findings, finding.code, span, offer.title)
                 for offer in fix_offers_at(result.analysis, result.findings, finding.code, span)]
        for action in [a for a in built if a is not None] + actions_for(result.analysis, finding.code, finding.line):
            assert all(0 <= e.start <= e.end <= len(text) for e in action.edits), action
            if parsed:
                assert parses(apply_edits(text, action.edits)), action.title


# ------------------------------------------------------------------ one mistake
MODEL_FILE = """import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        return F.softmax(self.fc(x))


def make(device):
    model = Net().to(device)
    return nn.DataParallel(model)


def typing_here(model, loader):
    total = 0
    for batch in loader:
        out = model(batch)
        total += out.sum()
    return total


def evaluate(model, loader):
    model.eval()
    for x in loader:
        probs = torch.softmax(model(x))
    return probs


def train(model, loader, optimizer):
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
"""
BROKEN_FUNCTION = (20, 25)  # lines of `typing_here`
# Mistakes made on one line of it, as when typing: (what is done, the text it needs).
MISTAKES = {
    "open bracket": lambda line: line.rstrip() + "(",
    "open list": lambda line: line.replace(" = ", " = [", 1) if " = " in line else line + " = [",
    "trailing operator": lambda line: line.rstrip() + " +",
    "trailing dot": lambda line: line.rstrip() + ".",
    "lost colon": lambda line: line.rstrip().removesuffix(":") + ("" if line.rstrip().endswith(":") else " if"),
    "half keyword": lambda line: line[: len(line) - len(line.lstrip())] + "retu",
    "over-indented": lambda line: "    " + line,
    "unterminated string": lambda line: line.rstrip() + " 'abc",
    "unterminated docstring": lambda line: line[: len(line) - len(line.lstrip())] + '"""' + line.lstrip(),
    "stray closer": lambda line: line.rstrip() + ")",
    "half call": lambda line: line[: len(line) - len(line.lstrip())] + "print(x,",
}


def outside_broken(findings):
    first, last = BROKEN_FUNCTION
    return sorted((f.code, f.line, f.col, f.end_line, f.end_col) for f in findings
                  if f.code != SYNTAX_ERROR_CODE and not first <= f.line <= last)


def hovers_outside_broken(text):
    first, last = BROKEN_FUNCTION
    report = infer_shapes(check_source(text, "model.py").analysis)
    positions = [(n.lineno, n.col_offset) for n in ast.walk(ast.parse(MODEL_FILE))
                 if isinstance(n, ast.Name) and not first <= n.lineno <= last]
    return [(p, a.markdown if a else None) for p in positions for a in [report.hover(*p)]]


@settings(max_examples=30, deadline=None, derandomize=True, database=None)
@given(st.sampled_from(sorted(MISTAKES)), st.integers(BROKEN_FUNCTION[0], BROKEN_FUNCTION[1]))
def test_one_mistake_is_one_syntax_error_and_spares_the_other_functions(mistake, line):
    lines = MODEL_FILE.split("\n")
    lines[line - 1] = MISTAKES[mistake](lines[line - 1])
    text = "\n".join(lines)
    if parses(text):
        return  # this mistake is valid Python on this line
    findings = check_source(text, "model.py").findings
    syntax_errors = [f for f in findings if f.code == SYNTAX_ERROR_CODE]
    assert len(syntax_errors) == 1, [(f.line, f.message) for f in syntax_errors]
    assert outside_broken(findings) == outside_broken(check_source(MODEL_FILE, "model.py").findings)
    assert hovers_outside_broken(text) == hovers_outside_broken(MODEL_FILE)

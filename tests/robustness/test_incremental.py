"""An edited version checked as an edit of the previous one (parsed in part, facts of the
statements it did not touch reused) gives exactly what checking its text from scratch gives:
the same findings, inlay hints and shape hovers, through chains of edits, for the ways
people type (characters typed and deleted, lines added, cut and doubled, brackets left
open, tabs, CRLF) on real-looking files."""
from __future__ import annotations

import ast

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.robustness.mutations import KINDS, SOURCES, apply, read
from torch_lsp.analysis import analyze
from torch_lsp.checker import check_source
from torch_lsp.incremental_parse import reparse_edit
from torch_lsp.shapes import infer_shapes

BOUNDED = settings(max_examples=30, deadline=None, derandomize=True, database=None,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# Typing inside a function keeps most versions parseable, which is when the previous tree
# is reused: the edits the incremental path serves are the common ones here.
TYPED = ("x", "_1", " ", "", "\n", "\n        y = x\n", "    ", "# note", "(", "model", ".", "\"")
typing = st.tuples(st.just("typed"), st.floats(0, 1, exclude_max=True), st.integers(0, 999))
mutation = st.tuples(st.sampled_from(KINDS), st.floats(0, 1, exclude_max=True), st.integers(0, 999))
edits = st.lists(st.one_of(typing, typing, mutation), min_size=1, max_size=5)


def edit(text: str, change: tuple[str, float, int]) -> str:
    kind, where, what = change
    if kind != "typed":
        return apply(text, change)
    at = int(where * (len(text) + 1))
    return text[:at] + TYPED[what % len(TYPED)] + text[at + (what // len(TYPED)) % 3:]


def observed(result) -> tuple:
    """What a user sees of a check: every finding, and the shape pass's hints and hovers."""
    findings = list(result.findings)  # code, range, message, severity, fix, related places
    report = infer_shapes(result.analysis)
    lines = len(result.analysis.lines.lines)
    hovers = [report.hover(line, col) for line in range(1, lines + 1) for col in (4, 8, 12, 20)]
    return findings, report.inlay_hints(), hovers


@BOUNDED
@given(st.sampled_from(SOURCES), edits)
def test_a_chain_of_edits_checked_incrementally_equals_checking_each_text_from_scratch(path, changes):
    text = read(path)
    previous = check_source(text, str(path)).analysis
    for change in changes:
        text = edit(text, change)
        incremental = check_source(text, str(path), previous=previous.parsed)
        assert observed(incremental) == observed(check_source(text, str(path)))
        previous = incremental.analysis


@BOUNDED
@given(st.sampled_from(SOURCES), st.lists(typing, min_size=1, max_size=3))
def test_a_partly_parsed_tree_is_the_tree_of_the_whole_text(path, changes):
    text = read(path)
    previous = analyze(text)
    for change in changes:
        text = edit(text, change)
        tree = reparse_edit(previous.parsed, text)
        if tree is not None:
            assert ast.dump(tree, include_attributes=True) == ast.dump(ast.parse(text), include_attributes=True)
        previous = analyze(text, previous=previous.parsed)


def test_a_character_typed_in_a_function_reparses_only_that_function():
    text = "import torch\n\n\ndef f(x):\n    return x + 1\n\n\ndef g(y):\n    return y * 2\n"
    previous = analyze(text)
    edited = text.replace("x + 1", "x + 12")
    tree = reparse_edit(previous.parsed, edited)
    assert tree is not None
    assert tree.body[0] is previous.tree.body[0] and tree.body[2] is previous.tree.body[2]  # shared, not parsed
    assert tree.body[1] is not previous.tree.body[1]
    assert ast.dump(tree, include_attributes=True) == ast.dump(ast.parse(edited), include_attributes=True)


def test_an_edit_that_adds_a_line_reuses_the_statements_before_it_and_moves_the_ones_after():
    text = "import torch\n\n\ndef f(x):\n    return x + 1\n\n\ndef g(y):\n    return y * 2\n"
    previous = analyze(text)
    edited = text.replace("    return x + 1\n", "    x = x * 3\n    return x + 1\n")
    tree = reparse_edit(previous.parsed, edited)
    assert tree is not None and tree.body[0] is previous.tree.body[0]
    assert tree.body[2].lineno == previous.tree.body[2].lineno + 1
    assert ast.dump(tree, include_attributes=True) == ast.dump(ast.parse(edited), include_attributes=True)


def test_edits_that_could_change_other_statements_parse_the_whole_text():
    text = "import torch\n\n\ndef f(x):\n    return x + 1\n\n\ndef g(y):\n    return y * 2\n"
    previous = analyze(text)
    for edited in (text.replace("x + 1", "(x + 1"),  # an open bracket swallows what follows
                   text.replace("x + 1\n", "x + \\\n"),  # a continuation line joins the next one
                   text.replace("import torch", "import torch\nfrom __future__ import annotations")):
        assert reparse_edit(previous.parsed, edited) is None
    headed = analyze("# header\n" + text)
    assert reparse_edit(headed.parsed, "# a header\n" + text) is None  # before the first statement
    broken = analyze(text.replace("x + 1", "x +"))  # a previous version with a syntax error
    assert reparse_edit(broken.parsed, text) is None

"""Properties of every fix, over every rule fixture, every file of the shared corpus and
the examples.

For each finding and each fix offered for it (safe and unsafe):
- the fixed text parses;
- the finding is gone (its rule reports fewer findings), and the fix brings no new
  finding of another rule, except the two that follow by design (`EXPECTED_NEWCOMERS`);
- a safe fix edits nothing outside the code concerned: the outermost loop around the
  finding (or its statement), the header of its function, the place of a new import,
  and for TL206 the statement that applied the activation.
And for the whole file: `fix_all` with unsafe fixes leaves nothing it could fix, and
running it again changes nothing.
"""
from __future__ import annotations

import ast
import logging
from collections import Counter
from pathlib import Path

import pytest

from torch_lsp.checker import check_source
from torch_lsp.text import LineIndex
from torch_lsp.codeactions import apply_edits, build, fix_all, fix_offers, main_fix
from torch_lsp.codeactions.imports import import_anchor
from torch_lsp.diagnostics.correctness.tl206_activation_before_loss import activation_output
from torch_lsp.codeactions.locate import call_at, keyword_at, loop_at, statement_at
from torch_lsp.name_resolution import imported_names, references
from torch_lsp.syntax_nodes import argument

from tests.shared_files import SHARED, needs_shared, shared_file

REPO = Path(__file__).resolve().parents[2]
FILES = sorted((REPO / "tests" / "rules" / "fixtures").glob("*.py"))
FILES += sorted((SHARED / "corpus" / "rules").glob("*.py")) + sorted((SHARED / "corpus" / "clean").glob("*.py"))
FILES += sorted((REPO / "examples").glob("*.py"))
# A fix may bring these findings by design: `.item()` in a running sum syncs (TL401); once
# an evaluation function calls `model.eval()`, training loops of the same file that never
# call `model.train()` are reported (TL102), and `fix_all` then fixes them too.
EXPECTED_NEWCOMERS = {("TL301", "TL401"), ("TL103", "TL102")}


def _id(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


@pytest.fixture(autouse=True)
def no_fixer_errors(caplog):
    """A fixer that raises is logged and offers nothing; here that is a failure."""
    with caplog.at_level(logging.ERROR, logger="server.codeactions"):
        yield
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert not errors, errors


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_each_fix_parses_removes_its_finding_and_stays_in_place(path: Path):
    source = path.read_text(encoding="utf-8")
    result = check_source(source, str(path))
    before = Counter(f.code for f in result.findings)
    for finding in result.findings:
        for offer in fix_offers(result.analysis, finding):
            fix = build(offer)
            if fix is None:
                continue
            fixed = apply_edits(source, fix.edits)
            where = f"{finding.code} line {finding.line}, fix {fix.title!r}"
            ast.parse(fixed)
            after = Counter(f.code for f in check_source(fixed, str(path)).findings)
            assert after[finding.code] < before[finding.code], f"{where}: the finding is still reported"
            for code in after:
                if after[code] > before[code]:
                    assert (finding.code, code) in EXPECTED_NEWCOMERS, f"{where}: brings a new {code}"
            if offer.safety == "safe":
                _assert_edits_in_place(result.analysis, finding, fix.edits, where)


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_every_fix_a_finding_promises_is_offered_with_that_safety(path: Path):
    """What a diagnostic says (`fix (safe): ...` in the CLI, the lightbulb in an editor) is
    what the code action gives: never a promised fix that the fixer then declines."""
    source = path.read_text(encoding="utf-8")
    result = check_source(source, str(path))
    for finding in result.findings:
        if finding.fix is None:
            continue
        offers = fix_offers(result.analysis, finding)
        where = f"{finding.code} line {finding.line} promises {finding.fix.title!r}"
        assert offers, f"{where}, but no fix is offered"
        assert offers[0].safety == finding.fix.safety, f"{where} as {finding.fix.safety}, offered {offers[0].safety}"


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_fix_all_is_complete_and_idempotent(path: Path):
    source = path.read_text(encoding="utf-8")
    first = fix_all(source, str(path), unsafe=True)
    ast.parse(first.source)
    left = [
        (f.code, f.line) for f in first.remaining.findings
        if main_fix(first.remaining.analysis, f, unsafe=True) is not None
    ]
    assert not left, f"fixable findings left after fix_all: {left}"
    second = fix_all(first.source, str(path), unsafe=True)
    assert second.source == first.source
    assert not second.fixed


def _assert_edits_in_place(analysis, finding, edits, where: str) -> None:
    allowed = _merged(_allowed_ranges(analysis, finding))
    for edit in edits:
        assert any(start <= edit.start and edit.end <= end for start, end in allowed), (
            f"{where}: edits offsets {edit.start}-{edit.end} outside the code concerned {allowed}"
        )


def _allowed_ranges(analysis, finding) -> list[tuple[int, int]]:
    positions = analysis.lines
    loop = loop_at(analysis, finding)
    keyword = keyword_at(analysis, finding)
    node = loop.node if loop is not None else (
        call_at(analysis, finding) or statement_at(analysis, finding) or (keyword and keyword[0])
        or _statement_around(analysis, finding)
    )
    assert node is not None, "the finding's node was not found"
    context = analysis.context(node)
    outer = context.loops[0].node if context.loops else analysis.statement_of(node)
    ranges = [_lines_of(positions, outer.lineno, outer.end_lineno)]
    function = context.function
    if not function.is_module:
        first = min([function.node.lineno, *(d.lineno for d in function.node.decorator_list)])
        ranges.append(_lines_of(positions, first, function.node.body[0].lineno - 1))
    if finding.code == "TL206":  # the activation applied before the loss, maybe a statement earlier
        activation = activation_output(analysis, argument(node, 0, "input"))[1]
        statement = analysis.statement_of(activation)
        ranges.append(_lines_of(positions, statement.lineno, statement.end_lineno))
    if finding.code in ("TL704", "TL706"):  # a name imported with `from`: renamed where imported and used
        ranges += _imported_name_ranges(analysis, finding)
    anchor, _ = import_anchor(analysis)
    if anchor is not None:
        ranges.append(_lines_of(positions, anchor.lineno, anchor.lineno - 1))
        ranges.append(_lines_of(positions, anchor.end_lineno + 1, anchor.end_lineno))
    return ranges


def _statement_around(analysis, finding):
    """The statement a finding inside it reports (an imported name, an operator expression)."""
    inside = [stmt for stmt in analysis.statements if stmt.lineno <= finding.line <= stmt.end_lineno
              and not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.For, ast.While,
                                        ast.If, ast.With, ast.Try))]
    return inside[-1] if inside else None


def _imported_name_ranges(analysis, finding) -> list[tuple[int, int]]:
    ranges = []
    for imported in imported_names(analysis):
        alias = imported.alias
        local = alias.asname or alias.name
        spans = [(alias.lineno, alias.col_offset)] + [
            (r.node.lineno, r.node.col_offset) for r in references(analysis).get(imported.qualname, ())
            if isinstance(r.node, ast.Name) and r.node.id == local]
        if (finding.line, finding.col) in spans:
            stmt = imported.stmt
            ranges.append(_lines_of(analysis.lines, stmt.lineno, stmt.end_lineno))
            ranges += [_lines_of(analysis.lines, line, line) for line, _ in spans]
    return ranges


def _merged(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _lines_of(positions: LineIndex, first: int, last: int) -> tuple[int, int]:
    """From the start of line `first` to the start of the line after `last` (both included)."""
    return positions.line_start(first), positions.line_start(last + 1)


@needs_shared("corpus", "rules")
def test_the_shared_corpus_is_among_the_files_checked():
    assert [path for path in FILES if SHARED in path.parents], "no file of ../shared/corpus was collected"


def test_offers_are_titled_and_the_first_safe_one_is_preferred():
    path = shared_file("corpus", "rules", "TL301_accumulated_graph.py")
    result = check_source(path.read_text(encoding="utf-8"), str(path))
    for finding in result.findings:
        offers = fix_offers(result.analysis, finding)
        assert offers, finding
        assert offers[0].preferred and offers[0].safety == "safe"
        assert not any(o.preferred for o in offers[1:])
        assert len({o.title for o in offers}) == len(offers)

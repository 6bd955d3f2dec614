"""The shape pass run part by part (`torch_lsp.shapes.components`) shows exactly what the
whole-file run shows, and an edit that takes over the previous version's unchanged parts
shows exactly what a check of its text from scratch shows: the same shape findings,
inlay hints and hovers, through chains of edits, with older versions released as the
language server releases them."""
from __future__ import annotations

import gc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.generate import generate_source
from tests.robustness.mutations import KINDS, apply
from tests.robustness.test_incremental import TYPED, edit_statements
from torch_lsp.analysis import analyze
from torch_lsp.checker import check_source
from torch_lsp.shapes import infer_shapes, release_shapes
from torch_lsp.shapes.components import _latest, forget_parts, keeping_parts, partition
from torch_lsp.shapes.interpret import Engine
from torch_lsp.shapes.report import ShapeReport

REPO = Path(__file__).resolve().parents[2]
FILES = sorted(
    [*(REPO / "examples").glob("*.py"), *(REPO / "tests" / "shapes").rglob("*.py"),
     *(REPO / "tests" / "heldout").rglob("*.py"), *(REPO / "tests" / "rules" / "fixtures").glob("*.py")])
FILES = [p for p in FILES if p.name != "__init__.py" and not p.name.startswith("test_")]
# A file of many independent parts: copies of the examples, each under its own names.
GENERATED = generate_source(700, variant=7)

BOUNDED = settings(max_examples=25, deadline=None, derandomize=True, database=None,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def shown(report: ShapeReport) -> tuple:
    """What a user sees of the shape pass: its findings, inlay hints, and the hover at every
    name and call of the file."""
    analysis = report.analysis
    hovers = []
    for node in analysis.calls:
        hovers.append(report.hover(node.lineno, node.col_offset))
        hovers.append(report.hover(node.end_lineno, max(node.end_col_offset - 1, 0)))
    for line in range(1, len(analysis.lines.lines) + 1):
        for col in (4, 8, 12, 20):
            hovers.append(report.hover(line, col))
    return (tuple(report.mismatches), tuple(report.inlay_hints()), tuple(hovers), report.complete,
            tuple(sorted(report.class_summary(name) or "" for name in analysis.classes)))


def whole_file_report(text: str, path: str) -> ShapeReport:
    analysis = analyze(text, path)
    engine = Engine(analysis, None)
    if analysis.uses_torch:
        engine.run()
    return ShapeReport(analysis, engine)


def test_the_generated_file_runs_in_parts():
    assert len(partition(analyze(GENERATED, "generated.py"))) >= 4


@pytest.mark.parametrize("path", FILES + ["generated"], ids=lambda p: p if isinstance(p, str) else p.name)
def test_the_pass_in_parts_shows_what_the_whole_file_run_shows(path):
    text = GENERATED if path == "generated" else path.read_text(encoding="utf-8")
    name = "generated.py" if path == "generated" else str(path)
    assert shown(infer_shapes(analyze(text, name))) == shown(whole_file_report(text, name))


typing = st.tuples(st.just("typed"), st.floats(0, 1, exclude_max=True), st.integers(0, 999))
mutation = st.tuples(st.sampled_from(KINDS), st.floats(0, 1, exclude_max=True), st.integers(0, 999))
statement_edit = st.tuples(st.sampled_from(("add", "remove", "replace")), st.floats(0, 1, exclude_max=True),
                           st.integers(0, 999))
edits = st.lists(st.one_of(typing, typing, typing, mutation, statement_edit), min_size=1, max_size=6)


def edit(text: str, change) -> str:
    kind, where, what = change
    if kind in ("add", "remove", "replace"):
        return edit_statements(text, change)
    if kind != "typed":
        return apply(text, change)
    at = int(where * (len(text) + 1))
    return text[:at] + TYPED[what % len(TYPED)] + text[at + (what // len(TYPED)) % 3:]


SOURCES = [GENERATED, *(p.read_text(encoding="utf-8") for p in sorted((REPO / "examples").glob("*.py")))]


@BOUNDED
@given(st.sampled_from(range(len(SOURCES))), edits)
def test_edits_that_take_over_unchanged_parts_show_what_a_check_from_scratch_shows(which, changes):
    text = SOURCES[which]
    document = f"test-document-{which}"
    with keeping_parts(document):
        previous = check_source(text, "train.py").analysis
        infer_shapes(previous)
    try:
        for change in changes:
            text = edit(text, change)
            with keeping_parts(document):
                edited = check_source(text, "train.py", previous=previous.parsed).analysis
                report = infer_shapes(edited)
            release_shapes(previous)  # as the server releases the versions it no longer serves
            assert shown(report) == shown(infer_shapes(analyze(text, "train.py")))
            previous = edited
    finally:
        forget_parts(document)
    assert document not in _latest


def test_a_typed_character_runs_only_its_own_part_again():
    text = GENERATED
    with keeping_parts("one"):
        first = analyze(text, "generated.py")
        before = infer_shapes(first).engine.runs
        at = text.index("return ", len(text) // 2) + len("return")
        edited = analyze(text[:at] + " " + text[at:], "generated.py", previous=first.parsed)
        after = infer_shapes(edited).engine.runs
    forget_parts("one")
    assert len(after) == len(before) >= 4
    assert len([run for run in after if run in before]) == len(before) - 1


def test_a_released_version_keeps_the_parts_a_later_version_took_over_working():
    text = GENERATED
    with keeping_parts("two"):
        first = analyze(text, "generated.py")
        infer_shapes(first)
        at = text.rindex("\n\n\n")
        edited = analyze(text[:at] + "\nlate_name = 1" + text[at:], "generated.py", previous=first.parsed)
        report = infer_shapes(edited)
    release_shapes(first)
    gc.collect()
    assert shown(report) == shown(infer_shapes(analyze(edited.source, "generated.py")))
    runs = report.engine.runs
    del report
    forget_parts("two")
    assert not any(run.released for run in runs)  # the version's report still holds them
    assert release_shapes(edited)
    assert all(run.released for run in runs)


@pytest.mark.parametrize("source", [
    "import torch\n\ndef f(x):\n    return x\n\nraise SystemExit\n\ndef g():\n    return torch.zeros(2)\n",
    "import torch\n\ndef f():\n    return globals()['g']()\n\ndef g():\n    return torch.zeros(2)\n",
    "import torch\nimport config\n\ndef f():\n    config.size = 3\n\ndef g():\n    return torch.zeros(config.size)\n",
])
def test_files_whose_parts_could_reach_each_other_without_a_name_run_as_one(source):
    report = infer_shapes(analyze(source, "f.py"))
    assert isinstance(report.engine, Engine)
    assert shown(report) == shown(whole_file_report(source, "f.py"))


TWO_MAINS = ("import torch\n\ndef double(x):\n    return x * 2\n\ndef main():\n    return double(torch.zeros(2))\n\n"
             "def shift(x):\n    return x + 1\n\ndef main():\n    return shift(torch.ones(3, 4))\n")


@pytest.mark.parametrize("source, parts", [(TWO_MAINS, 2), (TWO_MAINS + "\nout = main()\n", None)])
def test_bindings_of_a_name_nothing_reads_join_no_parts(source, parts):
    # Two `def main()` that nothing calls exchange no value through the name: two parts.  Once
    # a statement reads `main`, which binding it sees depends on both: one part (the whole file).
    found = partition(analyze(source, "f.py"))
    assert (len(found) if found is not None else None) == parts
    assert shown(infer_shapes(analyze(source, "f.py"))) == shown(whole_file_report(source, "f.py"))


def test_parts_are_kept_for_the_most_recently_checked_documents_only(monkeypatch):
    from torch_lsp.shapes import components

    monkeypatch.setattr(components, "KEPT_LINES", 1500)
    documents = [f"lru-{n}" for n in range(4)]
    for document in documents:  # 700 lines each: two fit
        with keeping_parts(document):
            infer_shapes(analyze(GENERATED, "generated.py"))
    kept = [d for d in documents if d in _latest]
    for document in documents:
        forget_parts(document)
    assert kept == documents[-2:]


def test_a_documents_first_pass_runs_to_its_end_though_typed_past():
    # Typing right after opening, a first pass that stopped would leave the next version the
    # whole file to run again, and in a storm of edits no pass would ever finish.
    from torch_lsp.shapes.limits import stopping_when

    with keeping_parts("opened"):
        with stopping_when(lambda: True):
            report = infer_shapes(analyze(GENERATED, "generated.py"))
        kept = list(_latest["opened"].runs)
    forget_parts("opened")
    assert len(report.engine.runs) > 1 and kept == report.engine.runs
    assert shown(report) == shown(whole_file_report(GENERATED, "generated.py"))


def test_a_documents_first_pass_stops_once_the_document_is_closed():
    # Nothing would take its parts over: a document opened and closed at once keeps no pass going.
    from torch_lsp.shapes.limits import Superseded, stopping_when

    with keeping_parts("closed"):
        with stopping_when(lambda: True, closed=lambda: True), pytest.raises(Superseded):
            infer_shapes(analyze(GENERATED, "generated.py"))
    forget_parts("closed")


def test_a_pass_stopped_for_a_newer_version_hands_it_the_parts_it_finished():
    from torch_lsp.shapes.limits import Superseded, stopping_when

    # A new first line moves every statement: the second version runs every part again.
    text = "import os\n" + GENERATED
    at = text.index("return ", len(text) // 2) + len("return")
    asked = []
    with keeping_parts("stopped"):
        first = analyze(GENERATED, "generated.py")
        opened = infer_shapes(first).engine.runs
        second = analyze(text, "generated.py", previous=first.parsed)
        with stopping_when(lambda: asked.append(True) or len(asked) > 3):  # stops at the 4th question
            with pytest.raises(Superseded):
                infer_shapes(second)
        finished = [run for run in _latest["stopped"].runs if run not in opened]
        edited = analyze(text[:at] + " " + text[at:], "generated.py", previous=second.parsed)
        report = infer_shapes(edited)
    forget_parts("stopped")
    assert 1 <= len(finished) < len(report.engine.runs)
    assert all(run in report.engine.runs for run in finished)  # taken over, not run again
    assert shown(report) == shown(infer_shapes(analyze(edited.source, "generated.py")))


def test_a_part_that_reads_another_file_runs_again_when_that_file_changes(tmp_path):
    from torch_lsp.shapes import WorkspaceResolver

    model = tmp_path / "model.py"
    model.write_text("import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n"
                     "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 4)\n\n"
                     "    def forward(self, x):\n        return self.fc(x)\n", encoding="utf-8")
    train = ("import torch\nfrom model import Net\n\n\ndef run():\n    out = Net()(torch.randn(2, 8))\n"
             "    return out\n\n\ndef other():\n    y = torch.zeros(3, 5)\n    return y\n")
    path = str(tmp_path / "train.py")
    resolver = WorkspaceResolver([str(tmp_path)])
    hover_line, hover_col = 6, 4  # `out`
    with keeping_parts("foreign"):
        first = analyze(train, path)
        before = infer_shapes(first, resolver)
        assert "[2, 4]" in before.hover(hover_line, hover_col).markdown
        model.write_text(model.read_text(encoding="utf-8").replace("nn.Linear(8, 4)", "nn.Linear(8, 16)"),
                         encoding="utf-8")
        second = analyze(train, path, previous=first.parsed)
        after = infer_shapes(second, resolver)
    forget_parts("foreign")
    assert len(after.engine.runs) == 2
    assert "[2, 16]" in after.hover(hover_line, hover_col).markdown
    assert sum(run in before.engine.runs for run in after.engine.runs) == 1  # `other` is taken over

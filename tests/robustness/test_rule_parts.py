"""The rules run part by part for an open document (`torch_lsp.rule_parts`): an edit re-runs
the part-local rules only on the parts it changed, and what the user sees is exactly what a
check of the text from scratch shows, through chains of edits."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bench.generate import generate_source
from tests.robustness.test_shape_parts import BOUNDED, SOURCES, edit, edits
from torch_lsp import rule_parts
from torch_lsp.analysis import analyze
from torch_lsp.checker import add_shape_findings, check_source
from torch_lsp.rule_parts import forget_rule_parts, rule_partition
from torch_lsp.shapes.components import forget_parts, keeping_parts


def findings(result) -> list:
    return [(f.code, f.line, f.col, f.end_line, f.end_col, f.message, f.severity, f.fix, f.related)
            for f in result.findings]


def forget(document: str) -> None:
    forget_parts(document)
    forget_rule_parts(document)


def follow_edits(document: str, text: str, changes, check_edited, check_fresh) -> None:
    """Checks each edited version as the server does (`check_edited(text, previous parse)`,
    keeping the document's parts) and asserts it shows what `check_fresh(text)` shows."""
    with keeping_parts(document):
        previous = check_edited(text, None).analysis
    try:
        for change in changes:
            text = edit(text, change)
            with keeping_parts(document):
                edited = check_edited(text, previous.parsed)
            assert findings(edited) == findings(check_fresh(text))
            previous = edited.analysis
    finally:
        forget(document)
    assert document not in rule_parts._latest


@BOUNDED
@given(st.sampled_from(range(len(SOURCES))), edits)
def test_edits_checked_part_by_part_show_what_a_check_from_scratch_shows(which, changes):
    follow_edits(f"rules-document-{which}", SOURCES[which], changes,
                 lambda text, previous: check_source(text, "train.py", shapes=False, previous=previous),
                 lambda text: check_source(text, "train.py", shapes=False))


@BOUNDED
@given(st.sampled_from(range(len(SOURCES))), edits)
def test_the_rules_reading_the_shape_pass_show_after_edits_what_a_check_from_scratch_shows(which, changes):
    # As the server checks: the other rules first, then those reading the shape pass, each
    # step taking over its own findings of the unchanged parts.
    follow_edits(f"shape-rules-document-{which}", SOURCES[which], changes,
                 lambda text, previous: add_shape_findings(
                     check_source(text, "train.py", shapes=False, previous=previous)),
                 lambda text: check_source(text, "train.py"))


SOFTMAX_IN_TWO_PARTS = '''import torch
import torch.nn.functional as F


def attend(q, k):
    scores = q @ k.transpose(1, 2)
    return F.softmax(scores, dim=0)


def classify(x):
    # x: [B, D]
    logits = x * 2
    return F.softmax(logits, dim=-1)
'''


def test_a_shape_finding_is_found_again_only_in_the_part_whose_shapes_an_edit_changed():
    over_batch = SOFTMAX_IN_TWO_PARTS.replace("dim=-1", "dim=0")
    unstated = over_batch.replace("    # x: [B, D]\n", "")
    with keeping_parts("softmax"):
        first = add_shape_findings(check_source(SOFTMAX_IN_TWO_PARTS, "f.py", shapes=False))
        before = dict(rule_parts._latest["softmax"].steps[True].parts)
        second = add_shape_findings(check_source(over_batch, "f.py", shapes=False, previous=first.analysis.parsed))
        after = rule_parts._latest["softmax"].steps[True].parts
        third = add_shape_findings(check_source(unstated, "f.py", shapes=False, previous=second.analysis.parsed))
    forget("softmax")
    assert [(f.code, f.line) for f in first.findings] == [("TL202", 7)]
    assert [(f.code, f.line) for f in second.findings] == [("TL202", 7), ("TL202", 13)]
    # `attend`'s finding was taken over; `classify`'s part ran again.
    assert len(before) == len(after) == 2
    assert len([entry for entry in after.values() if any(entry is old for old in before.values())]) == 1
    # Without the comment the shape pass no longer knows dim 0 is the batch: the finding goes.
    assert [(f.code, f.line) for f in third.findings] == [("TL202", 7)]
    assert findings(third) == findings(check_source(unstated, "f.py"))


GENERATED = generate_source(700, variant=11)


def test_a_typed_character_runs_the_rules_again_on_its_own_part_only():
    at = GENERATED.index("return ", len(GENERATED) // 2) + len("return")
    edited_text = GENERATED[:at] + " " + GENERATED[at:]
    with keeping_parts("typed"):
        first = check_source(GENERATED, "generated.py", shapes=False)
        before = dict(rule_parts._latest["typed"].steps[False].parts)
        edited = check_source(edited_text, "generated.py", shapes=False, previous=first.analysis.parsed)
        after = rule_parts._latest["typed"].steps[False].parts
    forget("typed")
    assert len(before) == len(after) >= 4
    taken_over = [entry for entry in after.values() if any(entry is old for old in before.values())]
    assert len(taken_over) == len(after) - 1
    assert findings(edited) == findings(check_source(edited_text, "generated.py", shapes=False))


METHOD_ACROSS_PARTS = '''import torch
import torch.nn as nn


class Runner:
    def evaluate(self, model, batch):
        return model(batch)


def score(trainer, model, batch):
    return trainer.evaluate(model, batch)


def unrelated():
    return torch.zeros(2)
'''


def test_a_part_calling_a_method_another_part_defines_is_one_part_with_it():
    # The rules find what `trainer.evaluate(...)` may run by its name alone.
    parts = rule_partition(analyze(METHOD_ACROSS_PARTS, "f.py"))
    body = analyze(METHOD_ACROSS_PARTS, "f.py").tree.body
    names = [{getattr(body[i], "name", None) for i in indices} for indices, _ in parts]
    assert any({"Runner", "score"} <= group for group in names)
    assert any("unrelated" in group and "Runner" not in group for group in names)


ANOMALY_GATE = '''import torch

torch.autograd.set_detect_anomaly(True)


def train(model, loader, optimizer):
    for x, y in loader:
        optimizer.zero_grad()
        loss = model(x).sum()
        loss.backward()
        optimizer.step()
'''


def test_a_part_is_checked_again_when_a_fact_of_the_whole_file_it_read_changes():
    # TL408 reports the switch because the file trains somewhere: the switch and the loop are
    # two parts, and an edit of the loop decides whether the switch's part is reported.
    assert len(rule_partition(analyze(ANOMALY_GATE, "train.py"))) == 2
    commented = ANOMALY_GATE.replace("loss.backward()", "loss.backward()  # step")
    no_training = ANOMALY_GATE.replace("        loss.backward()\n        optimizer.step()\n", "")
    with keeping_parts("gate"):
        first = check_source(ANOMALY_GATE, "train.py", shapes=False)
        same = check_source(commented, "train.py", shapes=False, previous=first.analysis.parsed)
        untrained = check_source(no_training, "train.py", shapes=False, previous=same.analysis.parsed)
        trained = check_source(ANOMALY_GATE, "train.py", shapes=False, previous=untrained.analysis.parsed)
    forget("gate")
    assert [f.code for f in first.findings] == [f.code for f in same.findings] == ["TL408"]
    assert "TL408" not in [f.code for f in untrained.findings]
    assert [f.code for f in trained.findings] == ["TL408"]
    assert findings(untrained) == findings(check_source(no_training, "train.py", shapes=False))


def test_findings_are_kept_for_the_most_recently_checked_documents_only(monkeypatch):
    monkeypatch.setattr(rule_parts, "KEPT_LINES", 1500)
    documents = [f"kept-{n}" for n in range(4)]
    for document in documents:  # 700 lines each: two fit
        with keeping_parts(document):
            check_source(GENERATED, "generated.py", shapes=False)
    kept = [d for d in documents if d in rule_parts._latest]
    for document in documents:
        forget(document)
    assert kept == documents[-2:]


def test_the_command_line_checks_the_whole_file():
    before = dict(rule_parts._latest)
    check_source(GENERATED, "generated.py", shapes=False)  # no open document: nothing kept
    assert rule_parts._latest == before


def test_a_part_whose_rules_read_another_file_is_checked_again_when_that_file_changes(tmp_path):
    from tests.rules.test_project_wrappers import TORCH_UTILS, _project

    # `tune` backpropagates under `@smart_inference_mode()`, which `utils/torch_utils.py` defines
    # as a wrapper of inference mode: TL107, until that file makes it a plain decorator.
    script = _project(tmp_path)
    text, path = script.read_text(), str(script)
    assert len(rule_partition(analyze(text, path))) >= 3
    utils = tmp_path / "utils" / "torch_utils.py"
    with keeping_parts("importer"):
        first = check_source(text, path, shapes=False)
        assert ("TL107", 27) in [(f.code, f.line) for f in first.findings]
        utils.write_text(TORCH_UTILS.replace("return (torch.inference_mode if torch_1_9 else torch.no_grad)()(fn)",
                                             "return fn"))
        again = check_source(text, path, shapes=False, previous=first.analysis.parsed)
    forget("importer")
    assert ("TL107", 27) not in [(f.code, f.line) for f in again.findings]
    assert findings(again) == findings(check_source(text, path, shapes=False))


def test_a_file_at_the_findings_cap_of_a_line_is_checked_whole():
    # Which findings a full line keeps depends on the order of one run over every rule.
    crowded = "import torch\nimport torch.nn.functional as F\n\n\ndef f(x):\n    return x\n\n\ndef g(y):\n    " + \
        "; ".join(f"a{n} = F.softmax(y)" for n in range(25)) + "\n    return y\n"
    with keeping_parts("crowded"):
        first = check_source(crowded, "f.py", shapes=False)
        kept = "crowded" in rule_parts._latest
    forget("crowded")
    assert len([f for f in first.findings if f.line == 10]) == 20
    assert not kept

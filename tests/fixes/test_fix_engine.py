"""The fix engine on its own: edits and positions, findings without `data`, the shapes of
code where a fix must not be offered, and code that only partly parses."""
from __future__ import annotations

import dataclasses
import textwrap

import pytest

from torch_lsp.checker import check_source
from torch_lsp.text import LineIndex
from torch_lsp.codeactions import (
    TextEdit,
    apply_edits,
    diff_edits,
    finding_at,
    fix_all,
    fix_offers,
    fixes_for,
)


def check(source: str):
    return check_source(textwrap.dedent(source), "snippet.py")


def only(result, code: str):
    (finding,) = [f for f in result.findings if f.code == code]
    return finding


def fixed(result, finding, index: int = 0) -> str:
    return apply_edits(result.analysis.source, fixes_for(result.analysis, finding)[index].edits)


# --------------------------------------------------------------------- edits
def test_diff_edits_are_small_and_reproduce_the_new_text():
    old = "def f():\n    for x in y:\n        g(x)\n    return 1\n"
    new = "def f():\n    with torch.no_grad():\n        for x in y:\n            g(x)\n    return 1\n"
    edits = diff_edits(old, new)
    assert apply_edits(old, edits) == new
    assert [e.new_text for e in edits] == ["    with torch.no_grad():\n", "    ", "    "]
    assert all(e.start == e.end for e in edits), "re-indenting inserts, it never rewrites a line"


def test_diff_edits_never_cut_a_name_or_a_crlf():
    edits = diff_edits("total += loss_sum\r\nnext\r\n", "total += losses\nnext\r\n")
    assert edits == [TextEdit(9, 19, "losses\n")]


def test_touching_insertions_are_merged_in_order():
    edits = diff_edits("x = 1\n", "if debug:\n    x = 1\n")
    assert len(edits) == 1 and apply_edits("x = 1\n", edits) == "if debug:\n    x = 1\n"


def test_positions_convert_offsets_to_lines_code_points_and_bytes():
    text = "a = 'é'\r\nb = 1\rc = 2\n"
    positions = LineIndex(text)
    offset = text.index("b")
    assert positions.position(offset) == (2, 0)
    assert positions.position(text.index("c")) == (3, 0)
    assert positions.ast_position(text.index("'", 5)) == (1, 7)  # after the two-byte é
    assert positions.offset_of_ast(1, 7) == text.index("'", 5)


def test_edit_positions_use_code_point_columns():
    result = check("""\
        import torch.nn.functional as F

        def f(x):
            return {"é€𝔘": F.softmax(x)}
    """)
    (fix,) = fixes_for(result.analysis, only(result, "TL201"))
    (edit,) = fix.edits
    positions = result.analysis.lines
    (start_line, start_col), (end_line, end_col) = positions.position(edit.start), positions.position(edit.end)
    line = result.analysis.lines.line_text(start_line)
    assert (start_col, end_col) == (len('    return {"é€𝔘": F.softmax(x'),) * 2
    assert line[:start_col].endswith("softmax(x")
    assert edit.new_text == ", dim=-1"


# ------------------------------------------------------------ missing data
def test_a_finding_without_data_is_recomputed_from_its_range():
    result = check("""\
        import torch

        def fit(model, loader, optimizer):
            for x, y in loader:
                model(x).sum().backward()
                optimizer.step()
    """)
    finding = only(result, "TL101")
    bare = dataclasses.replace(finding, data={})
    assert [o.title for o in fix_offers(result.analysis, bare)] == [o.title for o in fix_offers(result.analysis, finding)]
    assert fixes_for(result.analysis, bare)[0].edits == fixes_for(result.analysis, finding)[0].edits
    again = finding_at(result.analysis, "TL101", finding.line, finding.col, finding.end_line, finding.end_col)
    assert again.data == finding.data


# ------------------------------------------------------- shapes of code
def test_zero_grad_joins_a_one_line_loop_body():
    result = check("""\
        import torch.nn.functional as F

        def train(model, loader, opt):
            for x, y in loader: loss = F.mse_loss(model(x), y); loss.backward(); opt.step()
    """)
    assert "for x, y in loader: opt.zero_grad(set_to_none=True); loss = " in fixed(result, only(result, "TL101"))


@pytest.mark.parametrize("code, source", [
    ("TL402", """\
        import torch.nn.functional as F

        def train(model, loader, opt, device):
            for x, y in loader:
                model.to(device); loss = F.mse_loss(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
    """),
    ("TL104", """\
        import torch

        w = torch.zeros(3, requires_grad=True)
        w += 1; print(w)
    """),
])
def test_no_fix_for_a_statement_sharing_its_line(code, source):
    result = check(source)
    assert fix_offers(result.analysis, only(result, code)) == []


def test_no_no_grad_around_code_that_yields():
    result = check("""\
        import torch

        def stream_predictions(model, loader):
            model.eval()
            for x in loader:
                yield model(x)
    """)
    assert fix_offers(result.analysis, only(result, "TL302")) == []


def test_no_grad_is_not_offered_when_a_training_step_uses_the_result():
    result = check("""\
        import torch
        import torch.nn.functional as F

        def predict(model, x):
            model.eval()
            return model(x)

        def train(model, loader, opt):
            for x, y in loader:
                loss = F.mse_loss(predict(model, x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
    """)
    for finding in result.findings:
        if finding.code == "TL302":
            assert fix_offers(result.analysis, finding) == []


def test_hoist_stops_at_the_loop_that_rebinds_a_name_it_uses():
    result = check("""\
        import torch.nn.functional as F

        def train(model, loaders, opt):
            for device, loader in loaders:
                for x, y in loader:
                    model.to(device)
                    loss = F.mse_loss(model(x), y)
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
    """)
    text = fixed(result, only(result, "TL402"))
    assert "    for device, loader in loaders:\n        model.to(device)\n        for x, y in loader:\n" in text


def test_fixes_still_work_next_to_half_typed_code():
    result = check("""\
        import torch.nn.functional as F

        def attention(scores):
            return F.softmax(scores)

        def half_typed(x:
    """)
    assert any(f.code == "syntax-error" for f in result.findings)
    assert "F.softmax(scores, dim=-1)" in fixed(result, only(result, "TL201"))
    assert fix_all(result.analysis.source, "snippet.py").source == result.analysis.source, (
        "fix_all leaves a file with a syntax error alone"
    )

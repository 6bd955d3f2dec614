"""What makes the shape pass cheap must never change an answer: the memo of size
arithmetic (keyed by the operands' identities), the canonical shortcuts, and the
garbage collector paused during the pass and put back as it was."""
from __future__ import annotations

import gc

from torch_lsp.analysis import analyze
from torch_lsp.shapes import infer_shapes
from torch_lsp.shapes.dims import Dim, parse_dim

MODEL = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.fc = nn.Linear(8 * 32 * 32, 10)

    def forward(self, x):
        x = self.conv(x)
        return self.fc(x.flatten(1))


out = Net()(torch.randn(4, 3, 32, 32))
'''


def fresh(text: str) -> Dim:
    """A new Dim object for the size (never one the memo has seen)."""
    dim = parse_dim(text, slash_is_floordiv=False)
    assert dim is not None, text
    return Dim(list(dim.terms))


def test_memoised_sums_and_products_match_a_fresh_computation_while_objects_come_and_go():
    # Operands are built and dropped in every round, so ids are reused by new objects with
    # other values: a memo hit for a stale id would give a wrong size here.
    texts = ["(H-3)//2+1", "n_embd", "3*C+1", "B*T", "(W+2)//4", "7", "1", "h-1"]
    for round_ in range(60):
        left = fresh(texts[round_ % len(texts)] + f"+{round_}")
        right = fresh(texts[(round_ * 3 + 1) % len(texts)])
        assert left + right == Dim(list(left.terms) + list(right.terms))
        assert (left * right).render() == (fresh(f"({left.render()})*({right.render()})")).render()
        assert left - right == Dim(list(left.terms) + [(m, -c) for m, c in right.terms])
        del left, right


def test_shortcuts_give_the_canonical_form():
    x = fresh("3*C*C+2*C+1")
    assert x + Dim() == x and Dim() + x == x
    assert Dim.const(1) * x == x == x * Dim.const(1)
    assert -x == Dim([(m, -c) for m, c in x.terms])
    assert x.scale(-2) == Dim([(m, -2 * c) for m, c in x.terms])
    assert x.scale(0) == Dim()
    assert not x.differs_from(fresh("3*C*C+2*C+1"))
    assert x.differs_from(fresh("3*C*C+2*C+2"))


def test_the_pass_puts_the_garbage_collector_back_as_it_was():
    assert gc.isenabled()
    report = infer_shapes(analyze(MODEL, "net.py"))
    assert gc.isenabled()
    assert [b.dims for b in report.bindings if b.name == "out"] == [[4, 10]]
    gc.disable()
    try:
        infer_shapes(analyze(MODEL, "net.py"))
        assert not gc.isenabled()  # paused by someone else: left paused
    finally:
        gc.enable()


BLOCKS = """
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return x + self.fc(x)


class Stack(nn.Module):
    def __init__(self, d, n):
        super().__init__()
        self.blocks = nn.ModuleList([Block(d) for _ in range(n)])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


y = Stack(16, 4)(torch.randn(2, 16))
"""


def test_a_loop_over_blocks_runs_each_block_once_per_input_shape():
    """The blocks' output is floating point like their input, so the loop's second pass
    calls `Block.forward` with the argument of its first: one context, not two."""
    report = infer_shapes(analyze(BLOCKS, "blocks.py"))
    block_forward = next(f for f in report.engine.frames_by_function if getattr(f, "name", "") == "forward"
                         and f.lineno == 11)
    contexts = [frame for frame in report.engine.frames_by_function[block_forward] if not frame.standalone]
    assert len(contexts) == 1
    assert [b.dims for b in report.bindings if b.name == "y"] == [[2, 16]]


def test_widening_a_loop_variable_whose_dtype_alone_changes_keeps_its_shape():
    """A loop still changing after two passes is widened: a tensor whose dtype alone changed
    keeps its shape (the dtype becomes unknown), one whose shape changed becomes unknown."""
    from torch_lsp.shapes.frame import widen
    from torch_lsp.shapes.values import Tensor

    dims = (Dim.const(64), Dim.const(3))
    before = {"x": Tensor(dims, True, "float"), "y": Tensor(dims, False, "float")}
    after = {"x": Tensor(dims, True, None), "y": Tensor(dims[:1], False, "float")}
    widened = widen(before, after)
    assert widened["x"].dims == dims and widened["x"].variadic and widened["x"].dtype is None
    assert widened["y"].dims == () and widened["y"].variadic


def test_an_in_place_update_keeps_the_target_dtype():
    """`idx += 0.5` raises on that line (an int64 tensor cannot hold the float result); the
    pass keeps `idx` int64 instead of reporting a float index on a later line."""
    report = infer_shapes(analyze(IN_PLACE, "in_place.py"))
    assert [m for m in report.mismatches if m.kind == "dtype"] == []


IN_PLACE = """
import torch
import torch.nn as nn

embed = nn.Embedding(100, 4)
idx = torch.arange(8)
idx += 0.5
out = embed(idx)
"""


# Module-level code of about 6,000 steps (a statement and a call each): the pass asks twice.
LONG_SCRIPT = "\n".join(f"y{n} = torch.randn(4, {n % 7 + 1})" for n in range(3000))


def _report_text(report) -> list:
    return [(b.line, b.name, str(b.dims)) for b in report.bindings] + [str(m) for m in report.mismatches]


def test_a_pass_whose_check_is_no_longer_wanted_stops_and_leaves_no_result():
    # What a language server does to the complete pass of a version the user typed past.
    from torch_lsp.shapes.limits import Superseded, stopping_when

    body = LONG_SCRIPT
    analysis = analyze(MODEL + body, "model.py")
    asked = []

    def stop() -> bool:
        asked.append(True)
        return len(asked) > 1  # wanted at the first question, no longer at the second

    with stopping_when(stop):
        try:
            infer_shapes(analysis)
        except Superseded:
            pass
        else:
            raise AssertionError("the pass ran to the end although its check was no longer wanted")
    assert len(asked) == 2
    # Nothing half-done was kept: the version's shapes, asked again, are the whole pass's.
    whole = infer_shapes(analyze(MODEL + body, "model.py"))
    assert _report_text(infer_shapes(analysis)) == _report_text(whole)
    assert any(b.name == "y2999" for b in whole.bindings)


def test_a_pass_whose_check_stays_wanted_gives_the_same_answer():
    from torch_lsp.shapes.limits import stopping_when

    body = LONG_SCRIPT
    with stopping_when(lambda: False):
        asked_report = infer_shapes(analyze(MODEL + body, "model.py"))
    assert _report_text(asked_report) == _report_text(infer_shapes(analyze(MODEL + body, "model.py")))

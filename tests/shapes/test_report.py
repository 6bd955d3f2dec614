"""What the front ends read: bindings, hover, inlay hints, summaries, positions, caching."""
from __future__ import annotations

import textwrap

from torch_lsp.analysis import analyze
from torch_lsp.shapes import infer_shapes

GPT = textwrap.dedent('''\
    import torch
    import torch.nn as nn
    from torch.nn import functional as F


    class CausalSelfAttention(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)
            self.c_proj = nn.Linear(config.n_embd, config.n_embd)
            self.n_head = config.n_head
            self.n_embd = config.n_embd

        def forward(self, x):
            B, T, C = x.size()
            qkv = self.c_attn(x)
            q, k, v = qkv.split(self.n_embd, dim=2)
            q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            att = F.softmax(q @ k.transpose(-2, -1), dim=-1)
            return self.c_proj(x)
''')


def report_of(source: str, path: str = "model.py"):
    analysis = analyze(source, path)
    return analysis, infer_shapes(analysis)


def binding(report, name: str, line: int):
    found = [b for b in report.bindings if b.name == name and b.line == line]
    assert len(found) == 1, (name, line, report.bindings)
    return found[0]


def test_symbolic_shapes_from_the_config():
    _, report = report_of(GPT)
    assert binding(report, "x", 14).dims == ["B", "T", "C"]
    assert binding(report, "qkv", 16).dims == ["B", "T", "3*n_embd"]
    assert binding(report, "q", 18).dims == ["B", "n_head", "T", "C//n_head"]
    assert binding(report, "att", 20).dims == ["B", "n_head", "T", "T"]
    assert binding(report, "qkv", 16).origin == "from self.c_attn: Linear(n_embd → 3*n_embd) (line 16)"


def test_hover_on_a_tensor_a_module_attribute_and_a_call():
    _, report = report_of(GPT)
    text = report.hover(16, 8).markdown  # `qkv`
    assert "qkv: Tensor[B, T, 3*n_embd]" in text
    assert "from self.c_attn: Linear(n_embd → 3*n_embd) (line 16)" in text
    attribute = report.hover(16, 20)  # `c_attn` in `self.c_attn(x)`
    assert "self.c_attn: Linear(n_embd → 3*n_embd)" in attribute.markdown
    assert "[B, T, C] → [B, T, 3*n_embd]" in attribute.markdown
    assert "parameters: 3*n_embd*n_embd+3*n_embd" in attribute.markdown
    assert (attribute.col, attribute.end_col) == (19, 25)  # the attribute name, not `self.`
    call = report.hover(21, 28)  # inside `self.c_proj(x)`, on the argument list
    assert call is not None


def test_hover_outside_anything_known_is_none():
    _, report = report_of(GPT)
    assert report.hover(1, 0) is None
    assert report.hover(500, 3) is None


def test_inlay_hints_follow_assignment_targets():
    analysis, report = report_of(GPT)
    hints = {(h.line, h.label) for h in report.inlay_hints()}
    assert (18, ": [B, n_head, T, C//n_head]") in hints
    assert not any(h.line == 14 for h in report.inlay_hints())  # parameters get none
    hint = next(h for h in report.inlay_hints() if h.line == 16)
    assert analysis.lines.line_text(16).encode()[:hint.col].decode().endswith("qkv")


def test_class_summary_lists_layers_shapes_and_parameters():
    source = GPT + textwrap.dedent('''

        class Config:
            n_embd = 32
            n_head = 4


        def demo():
            attention = CausalSelfAttention(Config())
            return attention(torch.randn(2, 8, 32))
    ''')
    analysis, report = report_of(source)
    summary = report.hover(6, 8).markdown  # the class name
    assert "c_attn (Linear(32 → 96))" in summary and "[2, 8, 96]" in summary and "3,168" in summary
    assert "c_proj (Linear(32 → 32))" in summary and "1,056" in summary
    assert "Total params: 4,224" in summary


def test_backward_requirement_for_an_unknown_parameter():
    _, report = report_of(textwrap.dedent('''\
        import torch.nn as nn

        class Head(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(128, 10)

            def forward(self, x):
                return self.fc(x)
    '''))
    x = binding(report, "x", 8)
    assert x.dims == ["*", 128]
    assert x.origin == "required by `self.fc` (line 9)"


def test_unknown_stays_unknown():
    _, report = report_of(textwrap.dedent('''\
        import torch

        def load(path, table):
            batch = torch.load(path)
            rows = table[batch]
            return rows.sum(dim=1)
    '''))
    assert report.bindings == []


def test_non_ascii_lines_keep_byte_columns():
    analysis, report = report_of(textwrap.dedent('''\
        import torch
        größe = torch.zeros(2, 3)  # größe: die Größe
    '''))
    found = binding(report, "größe", 2)
    assert (found.col, found.end_col) == (0, len("größe".encode()))
    assert found.dims == [2, 3]


def test_the_report_is_computed_once_per_analysis():
    analysis, report = report_of(GPT)
    assert infer_shapes(analysis) is report


def test_files_without_torch_are_not_analysed():
    _, report = report_of("x = [1, 2, 3]\n")
    assert report.bindings == [] and report.mismatches == []


def test_half_typed_code_still_has_shapes():
    _, report = report_of("import torch\nx = torch.zeros(4, 5)\ny = x.sum(dim=\n")
    assert binding(report, "x", 2).dims == [4, 5]


def test_in_place_reshaping_forgets_the_old_shape_and_generators_are_not_their_yields():
    _, report = report_of(textwrap.dedent('''\
        import torch

        x = torch.zeros(3, 4)
        x.unsqueeze_(0)
        y = x

        def batches(n):
            yield torch.zeros(n, 2)

        first = batches(5)
    '''))
    assert [(b.name, b.dims) for b in report.bindings] == [("x", [3, 4])]


def test_loops_join_what_each_iteration_binds():
    _, report = report_of(textwrap.dedent('''\
        import torch

        h = torch.zeros(2, 1)
        for step in range(100):
            h = torch.cat([h, torch.zeros(2, 1)], dim=1)
        out = h
    '''))
    assert binding(report, "h", 5).dims == [2, "?"]  # grows every step: not one size
    assert binding(report, "out", 6).dims == [2, "?"]


def test_a_default_resolver_follows_imports_for_every_caller(tmp_path):
    from torch_lsp.shapes import WorkspaceResolver, set_default_resolver

    (tmp_path / "blocks.py").write_text(textwrap.dedent('''\
        import torch.nn as nn

        class Proj(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(16, 4)

            def forward(self, x):
                return self.fc(x)
    '''), encoding="utf-8")
    source = "import torch\nfrom blocks import Proj\n\nout = Proj()(torch.randn(3, 16))\n"
    path = str(tmp_path / "train.py")
    _, without = report_of(source, path)
    assert without.bindings == []
    set_default_resolver(WorkspaceResolver())
    try:
        _, report = report_of(source, path)
    finally:
        set_default_resolver(None)
    assert binding(report, "out", 4).dims == [3, 4]
    assert binding(report, "out", 4).origin == "from self.fc: Linear(16 → 4) (blocks.py, line 9)"


def test_wrapped_modules_are_called_like_the_module():
    _, report = report_of(textwrap.dedent('''\
        import torch
        import torch.nn as nn

        model = torch.compile(nn.Linear(8, 3))
        out = model(torch.randn(5, 8))
        parallel = nn.parallel.DistributedDataParallel(nn.Linear(8, 2))
        y = parallel(torch.randn(4, 8))
    '''))
    assert binding(report, "out", 5).dims == [5, 3]
    assert binding(report, "y", 7).dims == [4, 2]


def test_arange_lengths_match_torch_for_every_step_sign():
    cases = [(0, 10, 1), (0, 10, 3), (10, 0, -1), (10, 0, -3), (5, 5, 1), (0, 10, -1), (2, 11, 2)]
    lines = ["import torch"] + [f"a{i} = torch.arange({s}, {e}, {st})" for i, (s, e, st) in enumerate(cases)]
    report = infer_shapes(analyze("\n".join(lines) + "\n", "arange.py"))
    shapes = {b.name: b.dims for b in report.bindings}
    for i, (start, end, step) in enumerate(cases):
        expected = len(range(start, end, step))  # what torch.arange gives for integer arguments
        assert shapes[f"a{i}"] == [expected], (start, end, step)


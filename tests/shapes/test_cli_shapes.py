"""`torch-lsp shapes FILE [--format text|json]`, run as a subprocess."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

MODEL = textwrap.dedent('''\
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 8, kernel_size=3)
            self.fc = nn.Linear(8 * 26 * 26, 10)

        def forward(self, x):
            h = self.conv(x)
            h = h.flatten(1)
            return self.fc(h)


    net = Net()
    images = torch.randn(4, 1, 28, 28)
    logits = net(images)
    label = "größe"; first, rest = logits[0], logits[1:]
    for row in logits:
        pass
''')


def test_json_records_have_exactly_the_documented_keys(cli, tmp_path: Path):
    (tmp_path / "net.py").write_text(MODEL, encoding="utf-8")
    completed = cli("shapes", "net.py", "--format", "json", cwd=tmp_path)
    assert completed.returncode == 0, completed.stderr
    records = json.loads(completed.stdout)
    assert all(list(r) == ["line", "column", "name", "shape"] for r in records)
    by_key = {(r["line"], r["name"]): r for r in records}
    assert by_key[(11, "x")]["shape"] == [4, 1, 28, 28]  # a parameter, from the call on line 19
    assert by_key[(12, "h")]["shape"] == [4, 8, 26, 26]
    assert by_key[(13, "h")]["shape"] == [4, 5408]
    assert by_key[(18, "images")] == {"line": 18, "column": 1, "name": "images", "shape": [4, 1, 28, 28]}
    assert by_key[(19, "logits")]["shape"] == [4, 10]
    assert by_key[(21, "row")]["shape"] == [10]  # a for target
    # tuple-unpacking targets after non-ASCII text: the column counts code points
    first = by_key[(20, "first")]
    assert first["column"] == MODEL.splitlines()[19].index("first") + 1
    assert first["shape"] == [10] and by_key[(20, "rest")]["shape"] == [3, 10]


def test_symbolic_dims_are_strings(cli, tmp_path: Path):
    (tmp_path / "conv.py").write_text(textwrap.dedent('''\
        import torch.nn as nn

        class Down(nn.Module):
            def __init__(self, channels):
                super().__init__()
                self.conv = nn.Conv2d(channels, 2 * channels, kernel_size=3, stride=2)

            def forward(self, x):
                B, C, H, W = x.shape
                y = self.conv(x)
                return y
    '''), encoding="utf-8")
    records = json.loads(cli("shapes", "conv.py", "--format", "json", cwd=tmp_path).stdout)
    y = next(r for r in records if r["name"] == "y")
    assert y["shape"] == ["B", "2*channels", "(H-3)//2+1", "(W-3)//2+1"]


def test_text_format_and_an_imported_model(cli, tmp_path: Path):
    (tmp_path / "model.py").write_text(MODEL.split("\n\nnet = Net()")[0] + "\n", encoding="utf-8")
    (tmp_path / "train.py").write_text(textwrap.dedent('''\
        import torch
        from model import Net

        model = Net()
        out = model(torch.randn(2, 1, 28, 28))
    '''), encoding="utf-8")
    completed = cli("shapes", "train.py", cwd=tmp_path)
    assert completed.returncode == 0, completed.stderr
    assert "train.py:5:1: out: [2, 10]  (from self.fc: Linear(5408 → 10) (model.py, line 14))" in completed.stdout


def test_a_missing_file_is_a_usage_error(cli, tmp_path: Path):
    completed = cli("shapes", "nope.py", cwd=tmp_path)
    assert completed.returncode == 2
    assert "no such file: nope.py" in completed.stderr

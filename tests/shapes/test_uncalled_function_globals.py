"""TL501 in a function nothing calls (a notebook's `forward` written to show an API): the module
values it reads are trusted only when the module binds the name once, since any later call sees
that binding; a name bound cell after cell (`input = ...` again and again) could hold any of
them when the function runs.  Run through the real CLI."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

NOTEBOOK_STYLE = textwrap.dedent('''\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    weight = torch.randn(4, 5)
    input = torch.randn(2, 3)
    input = torch.randn(1, 3, 224, 224)
    rows = torch.randn(8, 3)


    class MyLinear(nn.Module):
        def forward(self):
            return F.linear(input, weight)


    def project():
        return F.linear(rows, weight)
''')


def test_a_rebound_global_is_unknown_in_an_uncalled_function(cli, tmp_path: Path):
    (tmp_path / "demo.py").write_text(NOTEBOOK_STYLE, encoding="utf-8")
    completed = cli("check", "--select", "TL501", "--format", "json", "demo.py", cwd=tmp_path)
    assert completed.returncode in (0, 1), completed.stderr
    findings = json.loads(completed.stdout)
    assert [(f["line"], f["code"]) for f in findings] == [(17, "TL501")]
    assert "[8, 3]" in findings[0]["message"] and "[4, 5]" in findings[0]["message"]

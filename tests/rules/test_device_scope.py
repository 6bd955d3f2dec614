"""TL105 counts a device variable of the same function (or a parameter) or of the module only."""
from __future__ import annotations

from torch_lsp.checker import check_source
from torch_lsp.settings import Selection, Settings

SOURCE = '''import torch


def test_moves(model):
    dst_device = torch.device("cuda", 0)
    model.to(dst_device)


def test_cuda(model):
    model.cuda()


def helper(model, device):
    return model.cuda()


def local(model):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return model.cuda()
'''


def test_device_variable_of_another_function_does_not_count():
    result = check_source(SOURCE, "t.py", Settings().with_selection(Selection(select=("TL105",))))
    assert sorted(f.line for f in result.findings) == [14, 19]


SCRIPT = '''import torch


def load_model(path):
    model = torch.load(path, weights_only=False)
    model.cuda()
    return model.eval()


def embed(tokens):
    return torch.as_tensor(tokens).cuda()


if __name__ == "__main__":
    model = load_model("model.pt")
    device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
    model = model.to(device)
    print(model(embed([1, 2, 3])))
'''


def test_a_function_run_before_the_module_defines_the_device_gets_no_safe_fix(tmp_path, cli):
    """`load_model` runs before `device` is assigned: `.to(device)` there would raise NameError,
    so the finding stands but its fix is only offered as unsafe; `embed` runs after: safe."""
    result = check_source(SCRIPT, "t.py", Settings().with_selection(Selection(select=("TL105",))))
    assert {f.line: f.fix.safety for f in result.findings} == {6: "unsafe", 11: "safe"}
    (tmp_path / "sample.py").write_text(SCRIPT, encoding="utf-8")
    completed = cli("check", "--select", "TL105", "--diff", "sample.py", cwd=tmp_path)
    assert "+    model.to(device)" not in completed.stdout
    assert "+    return torch.as_tensor(tokens).to(device)" in completed.stdout

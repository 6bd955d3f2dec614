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

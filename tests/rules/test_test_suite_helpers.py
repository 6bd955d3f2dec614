"""TL405 leaves a test suite's helper modules alone: a task or fixture module beside the tests
that imports pytest (`tests/task.py` with `pytest.skip` guards) builds tiny in-process loaders on
purpose, so workers and pinning are no advice there (pytorch-lr-finder's XOR tasks). The same
module without pytest is a training module and keeps its finding."""
from __future__ import annotations

from dataclasses import replace

from torch_lsp.checker import check_source
from torch_lsp.settings import Selection, Settings

HELPER = """\
import torch
from torch.utils.data import DataLoader
{pytest_import}
from toy_data import ParityRows


def use_cuda():
    return torch.cuda.is_available()


class ParityTask:
    def __init__(self, batch_size=8):
        self.loader = DataLoader(ParityRows(64), batch_size=batch_size)
        self.device = torch.device("cuda" if use_cuda() else "cpu")

    def run(self, model):
        for x, y in self.loader:
            x, y = x.to(self.device), y.to(self.device)
            model(x).sub(y).pow(2).mean().backward()
"""


def _tl405_lines(source: str, path: str) -> list[int]:
    settings = replace(Settings()).with_selection(Selection(select=("TL405",)))
    return [f.line for f in check_source(source, path, settings).findings if f.code == "TL405"]


def test_helper_module_of_a_test_suite_is_not_flagged():
    source = HELPER.format(pytest_import="import pytest")
    assert _tl405_lines(source, "tests/task.py") == []


def test_same_module_without_pytest_is_flagged():
    source = HELPER.format(pytest_import="")
    assert _tl405_lines(source, "tests/task.py") == [13]

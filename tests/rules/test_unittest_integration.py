"""TL401 leaves an integration test alone whatever its file name: a module that defines a
`unittest.TestCase` running the training loop to assert a final accuracy
(`tests/integration/maml_test_notravis.py`, a name `is_test_file` does not recognise) reads its
losses every step with nobody waiting on the speed. The same loop without the test class is a
training script and keeps its finding."""
from __future__ import annotations

from dataclasses import replace

from torch_lsp.checker import check_source
from torch_lsp.settings import Selection, Settings

SCRIPT = """\
import unittest
import torch


def main(steps=100):
    device = torch.device("cuda")
    model = torch.nn.Linear(8, 2).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    total = 0.0
    for _ in range(steps):
        optimizer.zero_grad()
        loss = model(torch.randn(4, 8, device=device)).pow(2).mean()
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total / steps
{test_class}
"""

TEST_CLASS = """

class LinearIntegrationTests(unittest.TestCase):
    def test_final_loss(self):
        self.assertLess(main(), 1.0)
"""


def _tl401_lines(source: str, path: str) -> list[int]:
    settings = replace(Settings()).with_selection(Selection(select=("TL401",)))
    return [f.line for f in check_source(source, path, settings).findings if f.code == "TL401"]


def test_module_defining_a_test_case_is_not_flagged():
    source = SCRIPT.format(test_class=TEST_CLASS)
    assert _tl401_lines(source, "tests/integration/linear_test_notravis.py") == []


def test_same_loop_without_the_test_case_is_flagged():
    source = SCRIPT.format(test_class="")
    assert _tl401_lines(source, "tests/integration/linear_test_notravis.py") == [15]

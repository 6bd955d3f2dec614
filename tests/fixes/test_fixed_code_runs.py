"""Safe fixes of the training-loop rules, applied and then run (tiny models, CPU).

A safe fix must leave code that runs and does what the rule promised: gradients cleared
every step (TL101), the evaluation after training free of autograd (TL302), the model in
eval mode before it is evaluated (TL103).  Skipped where torch is not installed.
"""
from __future__ import annotations

import pytest

from torch_lsp.codeactions.fix_all import fix_all
from torch_lsp.settings import Selection, Settings

torch = pytest.importorskip("torch")

TRAIN_THEN_SCORE = '''
import torch
import torch.nn as nn


def fit_then_score(model, loader, val_loader, optimizer):
    model.train()
    for x, y in loader:
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    model.eval()
    outputs = []
    for x, y in val_loader:
        outputs.append(model(x))
    return outputs


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.1), nn.BatchNorm1d(8), nn.Linear(8, 3))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = [(torch.randn(6, 4), torch.randint(0, 3, (6,))) for _ in range(3)]
    return model, fit_then_score(model, data, data, optimizer)
'''

PREDICT = '''
import torch
import torch.nn as nn


def main():
    net_model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 3))
    with torch.no_grad():
        return net_model, net_model(torch.randn(5, 4))
'''


def _fixed(source: str, *codes: str) -> str:
    settings = Settings().with_selection(Selection(select=codes))
    return fix_all(source, "train.py", settings).source


def _run(source: str):
    namespace: dict = {}
    exec(compile(source, "train.py", "exec"), namespace)
    return namespace["main"]()


def test_tl101_and_tl302_fixes_run_and_do_what_they_say():
    fixed = _fixed(TRAIN_THEN_SCORE, "TL101", "TL302")
    assert "optimizer.zero_grad(set_to_none=True)" in fixed and "torch.no_grad()" in fixed
    model, outputs = _run(fixed)
    assert outputs and not any(o.requires_grad for o in outputs)
    assert not model.training


def test_tl103_fix_runs_and_puts_the_model_in_eval_mode():
    fixed = _fixed(PREDICT, "TL103")
    assert "net_model.eval()" in fixed
    model, first = _run(fixed)
    assert not model.training
    with torch.no_grad():
        assert torch.equal(model(torch.ones(2, 4)), model(torch.ones(2, 4)))  # dropout off: deterministic
    assert first.shape == (5, 3)

"""TL409 (missing-compile) and accelerate: a script whose `Accelerator` is built to compile
(`dynamo_backend="inductor"`, `dynamo_plugin=TorchDynamoPlugin(...)`) has its model
compiled by `accelerator.prepare(model)` with no `torch.compile` call in the file, so the
rule stays silent; an `Accelerator` left at its defaults, or set to `dynamo_backend="no"`,
compiles nothing the file shows, and the hint stands. Checked with the real CLI."""
from __future__ import annotations

import json

import pytest

from tests.test_cli import write

TRAIN = """\
import torch
from accelerate import Accelerator
from accelerate.utils import TorchDynamoPlugin

accelerator = Accelerator({options})
model = torch.nn.Sequential(torch.nn.Linear(512, 2048), torch.nn.GELU(), torch.nn.Linear(2048, 10))
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
loader = torch.utils.data.DataLoader(torch.load("data.pt", weights_only=True), batch_size=64, num_workers=4)
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
for epoch in range(100):
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
"""


def _tl409_lines(tmp_path, cli) -> list[int]:
    completed = cli("check", "--format", "json", "--select", "TL409", "train.py", cwd=tmp_path)
    assert completed.returncode in (0, 1), completed.stderr
    return [item["line"] for item in json.loads(completed.stdout) if item["code"] == "TL409"]


@pytest.mark.parametrize("options", [
    'dynamo_backend="inductor"',
    'mixed_precision="bf16", dynamo_plugin=TorchDynamoPlugin(backend="inductor", use_regional_compilation=True)',
])
def test_a_model_prepared_by_a_compiling_accelerator_is_compiled(tmp_path, cli, options):
    write(tmp_path, {"train.py": TRAIN.format(options=options)})
    assert _tl409_lines(tmp_path, cli) == []


@pytest.mark.parametrize("options", ["", 'mixed_precision="bf16"', 'dynamo_backend="no"', 'dynamo_backend="NO"'])
def test_an_accelerator_that_compiles_nothing_is_flagged(tmp_path, cli, options):
    write(tmp_path, {"train.py": TRAIN.format(options=options)})
    assert _tl409_lines(tmp_path, cli) == [12]


def test_a_model_kept_out_of_prepare_is_flagged(tmp_path, cli):
    """An Accelerator built to compile, used only for its device: the model never reaches `prepare`."""
    write(tmp_path, {"train.py": TRAIN.format(options='dynamo_backend="inductor"').replace(
        "model, optimizer, loader = accelerator.prepare(model, optimizer, loader)",
        "model = model.to(accelerator.device)")})
    assert _tl409_lines(tmp_path, cli) == [12]

"""TL409 (missing-compile) and accelerate: a script whose model goes through
`accelerator.prepare(...)` is compiled, or not, by the launch configuration
(`accelerate launch --dynamo_backend inductor`, the config file, a `TorchDynamoPlugin`):
the file cannot show it, so the rule stays silent, unless the script turns Dynamo off
itself (`Accelerator(dynamo_backend="no")`). Checked with the real CLI."""
from __future__ import annotations

import json

import pytest

from tests.test_cli import write

TRAIN = """\
import torch
from accelerate import Accelerator

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


@pytest.mark.parametrize("options", ["", 'mixed_precision="bf16"', 'dynamo_backend="inductor"'])
def test_a_model_prepared_by_accelerate_is_compiled_at_launch(tmp_path, cli, options):
    write(tmp_path, {"train.py": TRAIN.format(options=options)})
    assert _tl409_lines(tmp_path, cli) == []


@pytest.mark.parametrize("options", ['dynamo_backend="no"', 'dynamo_backend="NO"'])
def test_dynamo_turned_off_in_the_script_is_flagged(tmp_path, cli, options):
    write(tmp_path, {"train.py": TRAIN.format(options=options)})
    assert _tl409_lines(tmp_path, cli) == [11]


def test_without_prepare_the_script_compiles_nothing(tmp_path, cli):
    """An Accelerator used only for its device: the model never reaches `prepare`."""
    write(tmp_path, {"train.py": TRAIN.format(options="").replace(
        "model, optimizer, loader = accelerator.prepare(model, optimizer, loader)",
        "model = model.to(accelerator.device)")})
    assert _tl409_lines(tmp_path, cli) == [11]

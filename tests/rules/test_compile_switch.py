"""TL409 (missing-compile) and a file's own compile setting: a script with a compile switch
(`args.use_compile` forced off because its patched `forward` does not compile, a
`torch_compile=` keyword handed on to a trainer, a `compile` parameter) but no
`torch.compile` call has already decided about compiling, so the hint stays silent; the same
script without the switch is flagged. `is_compiled_module` names no such setting. Checked
with the real CLI."""
from __future__ import annotations

import json

import pytest

from tests.test_cli import write

TRAIN = """\
import argparse
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=3)
{option}args = parser.parse_args()
{decision}
net = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 8))
opt = torch.optim.AdamW(net.parameters(), lr=1e-4)
batches = torch.load("batches.pt", weights_only=True)
for epoch in range(args.epochs):
    for x, y in batches:
        loss = torch.nn.functional.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
"""

SWITCH_OFF = ('parser.add_argument("--use_compile", type=int, default=0)\n',
              'if args.use_compile:\n    args.use_compile = 0\n    print("patched forward: compile turned off")\n')
HANDED_ON = ('', 'settings = dict(torch_compile=False, seed=0)\n')
PARAMETER = ('', 'def setup(model, compile=False):\n    return model\n')
UNWRAP = ('', 'from diffusers.utils.torch_utils import is_compiled_module\n'
              'unwrap = lambda m: m._orig_mod if is_compiled_module(m) else m\n')


def _tl409_lines(tmp_path, cli) -> list[int]:
    completed = cli("check", "--format", "json", "--select", "TL409", "train.py", cwd=tmp_path)
    assert completed.returncode in (0, 1), completed.stderr
    return [item["line"] for item in json.loads(completed.stdout) if item["code"] == "TL409"]


def _script(option: str, decision: str) -> str:
    return TRAIN.format(option=option, decision=decision)


@pytest.mark.parametrize("option,decision", [SWITCH_OFF, HANDED_ON, PARAMETER])
def test_a_file_with_its_own_compile_setting_is_not_flagged(tmp_path, cli, option, decision):
    write(tmp_path, {"train.py": _script(option, decision)})
    assert _tl409_lines(tmp_path, cli) == []


@pytest.mark.parametrize("option,decision", [('', ''), UNWRAP])
def test_a_file_without_a_compile_setting_is_flagged(tmp_path, cli, option, decision):
    source = _script(option, decision)
    write(tmp_path, {"train.py": source})
    line = next(number for number, text in enumerate(source.splitlines(), 1) if "cross_entropy" in text)
    assert _tl409_lines(tmp_path, cli) == [line]

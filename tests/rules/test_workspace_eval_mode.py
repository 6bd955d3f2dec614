"""TL103 follows a model's loader into the project file that defines it: `model =
load_model(path)` imported from `utils.py`, whose `model.eval()` before `return model` leaves
what it hands back in eval mode, so a `no_grad` pass over that model (in a function the
caller feeds it to) is no missing `eval()`.  A loader that returns the model in train mode
is still reported.  Checked with the real CLI on a small project."""
from __future__ import annotations

import json

from tests.test_cli import write

UTILS = """\
import torch
from torch import nn


class SpeechModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(80, 256, dropout=0.1, num_layers=2)
        self.head = nn.Sequential(nn.Dropout(0.1), nn.Linear(256, 29))

    def forward(self, x):
        return self.head(self.rnn(x)[0])


def load_model(device, path):
    model = SpeechModel()
    model.load_state_dict(torch.load(path, weights_only=True))
    model.eval()
    model = model.to(device)
    return model


def load_for_finetuning(device, path):
    model = SpeechModel()
    model.load_state_dict(torch.load(path, weights_only=True))
    return model.to(device)
"""

INFERENCE = """\
import torch

from speech.utils import {loader}


def transcribe(audio_path, device):
    model = {loader}(device=device, path="speech.pt")
    return run_transcribe(audio_path, model=model, device=device)


def run_transcribe(audio_path, model, device):
    outputs = []
    with torch.no_grad():
        for chunk in torch.load(audio_path, weights_only=True).split(100):
            outputs.append(model(chunk.to(device)).cpu())
    return torch.cat(outputs)
"""


def _tl103_lines(tmp_path, cli, loader: str) -> list[int]:
    write(tmp_path, {"speech/__init__.py": "", "speech/utils.py": UTILS,
                     "speech/inference.py": INFERENCE.format(loader=loader)})
    completed = cli("check", "--format", "json", "--select", "TL103", "speech/inference.py", cwd=tmp_path)
    assert completed.returncode in (0, 1), completed.stderr
    return sorted(item["line"] for item in json.loads(completed.stdout) if item["code"] == "TL103")


def test_a_model_from_an_imported_loader_that_evaluates_it_is_in_eval_mode(tmp_path, cli):
    assert _tl103_lines(tmp_path, cli, "load_model") == []


def test_a_model_from_an_imported_loader_that_leaves_train_mode_is_reported(tmp_path, cli):
    assert _tl103_lines(tmp_path, cli, "load_for_finetuning") == [15]

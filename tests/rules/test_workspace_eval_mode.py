"""TL103 follows a model's loader into the project file that defines it: `model =
load_model(path)` imported from `utils.py`, whose `model.eval()` before `return model` leaves
what it hands back in eval mode, so a `no_grad` pass over that model (in a function the
caller feeds it to) is no missing `eval()`.  A loader that returns the model in train mode
is still reported.  Likewise a model a project factory hands back (`psnr, ssim =
build_iqa_model(device)`) is followed to its class: fixed arithmetic needs no `eval()`, a
learned metric with dropout does.  Checked with the real CLI on a small project."""
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


# Image-quality metrics built by a factory in another project file and handed to `test()`:
# fixed arithmetic (a Gaussian window made with NumPy through a closure factory) has no
# train/eval behaviour, so a missing `eval()` changes nothing; a learned metric with dropout
# built by the same factory is still reported.
METRICS = """\
from itertools import repeat

import numpy as np
import torch
from torch import nn


def _to_tuple(dim):
    def parse(x):
        return x if isinstance(x, tuple) else tuple(repeat(x, dim))
    return parse


def _gaussian_window(size, sigma):
    m, n = [(s - 1.0) / 2.0 for s in _to_tuple(2)(size)]
    y, x = np.ogrid[-m:m + 1, -n:n + 1]
    g = np.exp(-(x * x + y * y) / (2.0 * sigma * sigma))
    return torch.from_numpy(g / g.sum()).float()[None, None]


class PSNR(nn.Module):
    def forward(self, sr, gt):
        return 10 * torch.log10(1.0 / torch.mean((sr - gt) ** 2))


class SSIM(nn.Module):
    def __init__(self, size=11, sigma=1.5):
        super().__init__()
        self.window = _gaussian_window(size, sigma)

    def forward(self, sr, gt):
        return torch.nn.functional.conv2d(sr * gt, self.window.to(sr.device)).mean()


class LearnedMetric(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Sequential(nn.Conv2d(3, 8, 3), nn.Dropout(0.2))

    def forward(self, sr, gt):
        return (self.head(sr) - self.head(gt)).abs().mean()
"""

BUILD = """\
from quality.metrics import PSNR, SSIM, LearnedMetric


def build_iqa_model(device):
    psnr_model = PSNR()
    ssim_model = SSIM()
    psnr_model = psnr_model.to(device)
    ssim_model = ssim_model.to(device)
    return psnr_model, ssim_model


def build_learned_model(device):
    return LearnedMetric().to(device), PSNR()
"""

TEST = """\
import torch

from quality.build import {factory}


def test(g_model, loader, psnr_model, ssim_model):
    g_model.eval()
    scores = []
    with torch.no_grad():
        for lr, gt in loader:
            sr = g_model(lr)
            scores.append((psnr_model(sr, gt), ssim_model(sr, gt)))
    return scores


def main(g_model, loader, device):
    psnr_model, ssim_model = {factory}(device)
    return test(g_model, loader, psnr_model, ssim_model)
"""


def _metric_tl103_findings(tmp_path, cli, factory: str) -> list[tuple[int, str]]:
    write(tmp_path, {"quality/__init__.py": "", "quality/metrics.py": METRICS, "quality/build.py": BUILD,
                     "quality/test.py": TEST.format(factory=factory)})
    completed = cli("check", "--format", "json", "--select", "TL103", "quality/test.py", cwd=tmp_path)
    assert completed.returncode in (0, 1), completed.stderr
    return sorted((item["line"], item["message"].split("`")[1]) for item in json.loads(completed.stdout)
                  if item["code"] == "TL103")


def test_metrics_of_fixed_arithmetic_from_a_project_factory_need_no_eval(tmp_path, cli):
    assert _metric_tl103_findings(tmp_path, cli, "build_iqa_model") == []


def test_a_learned_metric_with_dropout_from_a_project_factory_is_reported(tmp_path, cli):
    # The learned metric lands in `psnr_model` (the factory's first place); the PSNR in second place is proven.
    assert _metric_tl103_findings(tmp_path, cli, "build_learned_model") == [(12, "psnr_model")]

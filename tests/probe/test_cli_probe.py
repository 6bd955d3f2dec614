"""`torch-lsp check --probe` and `torch-lsp shapes --probe`, run as a user would."""
from __future__ import annotations

import json
import sys

from tests.conftest import run_cli
from tests.lsp.test_probe import UNCALLED  # a model class the file never calls
from tests.shapes.conftest import require_torch

MODELS = '''import torch
import torch.nn as nn


class Spectral(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(64, 16)

    def forward(self, x):
        spectrum = torch.fft.rfft(x).abs()
        out = self.proj(spectrum)
        return out


class Good(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.fc = nn.Linear(8 * 30 * 30, 10)

    def forward(self, x):
        h = self.conv(x)
        y = self.fc(h.flatten(1))
        return y


def report(model, batch):
    with open("REPORT_WRITTEN", "w") as handle:
        handle.write(str(model(batch).shape))


good = Good()(torch.randn(5, 3, 32, 32))
report(Spectral(), torch.randn(4, 64))
'''


def test_check_probe_reports_what_static_analysis_cannot_see(tmp_path):
    require_torch()
    (tmp_path / "models.py").write_text(MODELS)
    static = run_cli("check", "models.py", cwd=tmp_path)
    assert "TL502" not in static.stdout  # off unless asked: the probe runs the user's code
    probed = run_cli("check", "--probe", "--probe-python", sys.executable, "--format", "json", "models.py",
                     cwd=tmp_path, timeout=180)
    assert probed.returncode == 1, probed.stderr
    problems = [p for p in json.loads(probed.stdout) if p["code"] == "TL502"]
    assert [(p["line"], p["column"], p["severity"]) for p in problems] == [(12, 9, "error")]
    assert problems[0]["message"] == (
        "The shape probe ran `Spectral()` on a [4, 64] input and it raised RuntimeError: "
        "mat1 and mat2 shapes cannot be multiplied (4x33 and 64x16)")
    assert not (tmp_path / "REPORT_WRITTEN").exists()  # a function call at top level never runs


def test_shapes_probe_confirms_the_static_shapes(tmp_path):
    require_torch()
    (tmp_path / "models.py").write_text(MODELS)
    done = run_cli("shapes", "--probe", "--probe-python", sys.executable, "--format", "json", "models.py",
                   cwd=tmp_path, timeout=180)
    assert done.returncode == 0, done.stderr
    by_name = {(r["line"], r["name"]): r for r in json.loads(done.stdout)}
    assert by_name[(23, "h")]["shape"] == [5, 8, 30, 30]
    assert by_name[(23, "h")]["probe"] == "confirmed by probe"
    assert by_name[(24, "y")]["probe"] == "confirmed by probe"
    text = run_cli("shapes", "--probe", "--probe-python", sys.executable, "models.py", cwd=tmp_path, timeout=180)
    assert "models.py:23:9: h: [5, 8, 30, 30]" in text.stdout and "[confirmed by probe]" in text.stdout
    assert "models.py:12:9: TL502 The shape probe ran `Spectral()`" in text.stdout


def test_a_probe_without_torch_says_how_to_get_it(tmp_path):
    (tmp_path / "models.py").write_text(MODELS)
    no_torch = tmp_path / "python-without-torch"
    no_torch.write_text(f"#!/bin/sh\nexec {sys.executable} -S \"$@\"\n")
    no_torch.chmod(0o755)
    done = run_cli("check", "--probe", "--probe-python", str(no_torch), "models.py", cwd=tmp_path, timeout=120)
    assert "torch is not installed in the probe's Python" in done.stderr
    assert done.stderr.count("torch is not installed") == 1
    assert "TL502" not in done.stdout


def test_the_probe_is_never_enabled_by_the_projects_own_files(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.torch-lsp]\nprobe.enabled = true\nprobe.python = "/bin/sh"\n')
    (tmp_path / "models.py").write_text(MODELS)
    done = run_cli("check", "models.py", cwd=tmp_path)
    assert "`probe.enabled` is ignored: it makes torch-lsp run the project's code" in done.stderr
    assert "`probe.python` is ignored" in done.stderr
    assert "TL502" not in done.stdout


def test_probe_and_fix_do_not_combine(tmp_path):
    (tmp_path / "models.py").write_text(MODELS)
    done = run_cli("check", "--probe", "--fix", "models.py", cwd=tmp_path)
    assert done.returncode == 2 and "does not combine with --fix" in done.stderr


CONFIGURED = '''from dataclasses import dataclass

import torch
import torch.nn as nn


@dataclass
class Config:
    width: int = 32
    classes: int = 10


class Head(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.proj = nn.Linear(config.width, config.classes)

    def forward(self, x):
        spectrum = torch.fft.rfft(x).abs()
        return self.proj(spectrum)


def main(args):
    config = Config(width=48, classes=7)
    {mutation}
    model = Head(config)
    print(model(torch.randn(4, 48)).shape)
'''


def test_check_probe_builds_the_model_from_the_config_the_file_builds(tmp_path):
    require_torch()
    (tmp_path / "head.py").write_text(CONFIGURED.format(mutation="pass"))
    probed = run_cli("check", "--probe", "--probe-python", sys.executable, "--format", "json", "head.py",
                     cwd=tmp_path, timeout=180)
    problems = [p for p in json.loads(probed.stdout) if p["code"] == "TL502"]
    assert [(p["line"], p["message"]) for p in problems] == [(20, (
        "The shape probe ran `Head(Config(width=48, classes=7))` on a [4, 48] input and it raised "
        "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x25 and 48x7)"))]


def test_a_config_the_probe_cannot_rebuild_is_not_guessed(tmp_path):
    require_torch()
    # Changed after it is built, or read from the command line: the probe would not run what the user runs.
    for mutation in ("config.width = args.width", "config = Config(width=args.width)"):
        (tmp_path / "head.py").write_text(CONFIGURED.format(mutation=mutation))
        probed = run_cli("check", "--probe", "--probe-python", sys.executable, "--format", "json", "head.py",
                         cwd=tmp_path, timeout=180)
        assert not [p for p in json.loads(probed.stdout) if p["code"] == "TL502"], mutation


def test_probe_input_runs_a_class_the_file_never_calls(tmp_path):
    require_torch()
    (tmp_path / "net.py").write_text(UNCALLED)
    args = ("check", "--probe", "--probe-python", sys.executable, "--format", "json")
    silent = run_cli(*args, "net.py", cwd=tmp_path, timeout=180)
    assert json.loads(silent.stdout) == []  # no input known: nothing probed, nothing guessed
    wrong = run_cli(*args, "--probe-input", "Net=[B, 3, 28, 28]", "net.py", cwd=tmp_path, timeout=180)
    (problem,) = json.loads(wrong.stdout)
    assert (problem["code"], problem["line"]) == ("TL502", 14)
    assert "on a [2, 3, 28, 28] input" in problem["message"]
    right = run_cli(*args, "--probe-input", "Net=[B, 3, 32, 32]", "net.py", cwd=tmp_path, timeout=180)
    assert json.loads(right.stdout) == []
    bad = run_cli(*args, "--probe-input", "Net=[B, C]", "net.py", cwd=tmp_path)
    assert bad.returncode == 2 and "`C` in `[B, C]` is not a size" in bad.stderr

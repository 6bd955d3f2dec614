"""The shape probe on a GPU (`probe.device = "cuda"`), run for real.

These tests need a CUDA device in the interpreter that runs them; elsewhere they skip,
saying so (the fallback to meta tensors without a GPU is tested in test_probe_worker.py).
What they pin down is what a user with a GPU sees: the probe runs there (not silently on
meta), measures the peak memory of a forward and backward pass, reports a shape error in
the words their own run would print, survives the GPU running out of memory and a model
that never returns, and does so through the CLI and the editor as well as the worker.
"""
from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from lsprotocol import types as lsp

from tests.conftest import run_cli
from tests.probe.test_cli_probe import MODELS as CLI_MODELS
from tests.lsp.lsp_session import PROFILES, session
from tests.lsp.test_probe import MODELS as EDITOR_MODELS
from tests.lsp.test_probe import position_of, probe_settings, probed_diagnostics
from tests.probe.test_probe_worker import MODELS, request
from torch_lsp.shapes.probe.client import ProbeClient, ProbeOptions


def require_cuda():
    try:
        import torch
    except ImportError:
        pytest.skip("torch is not installed, so there is no CUDA device to probe on")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device here: the probe's cuda path is tested on a machine with a GPU")
    return torch


GREEDY = '''
import torch
import torch.nn as nn


class Greedy(nn.Module):
    """Asks the GPU for far more than any card has: 2**40 floats."""
    def forward(self, x):
        hoard = torch.empty(2**40, device=x.device)
        return x + hoard[:1]
'''


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("probe_cuda")
    (folder / "models.py").write_text(MODELS)
    (folder / "greedy.py").write_text(GREEDY)
    return folder


@pytest.fixture(scope="module")
def client(workspace):
    require_cuda()
    client = ProbeClient(sys.executable, ProbeOptions(device="cuda", timeout=60), cwd=str(workspace))
    yield client
    client.close()


def test_the_probe_runs_on_the_gpu_and_measures_its_peak(client, workspace):
    answer = client.probe(request(workspace, "models.py", "Conv", [4, 3, 32, 32], memory=True, vary_batch=5))
    assert answer["ok"], answer
    assert answer["device"] == "cuda" and not answer.get("note")
    assert answer["output"] == [4, 10] and answer["varied"]["output"] == [5, 10]
    assert answer["submodules"]["conv"]["outputs"] == [[4, 8, 30, 30]]
    memory = answer["memory"]
    # Conv2d(3, 8, 3) and Linear(7200, 10): 224 + 72,010 parameters of 4 bytes.
    assert memory["parameters"] == (224 + 72_010) * 4
    # The measured peak holds at least the parameters, their gradients and the input.
    assert memory["measured_peak"] >= 2 * memory["parameters"] + 4 * 3 * 32 * 32 * 4


def test_a_shape_error_on_the_gpu_reads_as_the_users_run_would(client, workspace):
    answer = client.probe(request(workspace, "models.py", "Conv", [4, 3, 28, 28]))
    assert not answer["ok"] and answer["shape_error"], answer
    assert answer["error"].startswith("RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x5408 and 7200x10)")


def test_the_gpu_running_out_of_memory_is_reported_and_the_probe_goes_on(client, workspace):
    answer = client.probe(request(workspace, "greedy.py", "Greedy", [2, 3]))
    assert not answer["ok"] and not answer["shape_error"], answer
    assert "out of memory" in answer["error"].lower()
    after = client.probe(request(workspace, "models.py", "Conv", [2, 3, 32, 32]))
    assert after["ok"] and after["device"] == "cuda" and after["output"] == [2, 10], after


def test_a_model_that_never_returns_is_stopped_and_the_next_probe_runs(workspace):
    require_cuda()
    client = ProbeClient(sys.executable, ProbeOptions(device="cuda", timeout=20), cwd=str(workspace))
    try:
        spun = client.probe(request(workspace, "models.py", "Spin", [2, 3]))
        assert not spun["ok"] and "did not finish" in spun["error"], spun
        again = client.probe(request(workspace, "models.py", "Conv", [2, 3, 32, 32]))
        assert again["ok"] and again["device"] == "cuda", again
    finally:
        client.close()


def test_check_probe_on_the_gpu_from_the_projects_settings(tmp_path):
    require_cuda()
    (tmp_path / "models.py").write_text(CLI_MODELS)  # the CPU test's file: Spectral fails at line 12
    (tmp_path / "pyproject.toml").write_text('[tool.torch-lsp.probe]\ndevice = "cuda"\n')
    probed = run_cli("check", "--probe", "--probe-python", sys.executable, "--format", "json", "models.py",
                     cwd=tmp_path, timeout=240)
    assert probed.returncode == 1, probed.stderr
    problems = [p for p in json.loads(probed.stdout) if p["code"] == "TL502"]
    assert [(p["line"], p["severity"]) for p in problems] == [(12, "error")], probed.stdout
    assert problems[0]["message"].endswith("mat1 and mat2 shapes cannot be multiplied (4x33 and 64x16)")
    assert "meta tensors instead" not in probed.stderr + probed.stdout


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("profile", PROFILES[:1])
async def test_the_editor_shows_the_gpus_measured_peak(profile, tmp_path):
    require_cuda()
    async with session(profile, tmp_path, configuration=probe_settings(device="cuda", timeout=60)) as editor:
        document = editor.open("models.py", EDITOR_MODELS)
        await probed_diagnostics(editor, document, "TL502")
        text = ""
        for _ in range(100):
            summary = await editor.client.text_document_hover_async(lsp.HoverParams(
                text_document=lsp.TextDocumentIdentifier(uri=document.uri),
                position=position_of(EDITOR_MODELS, "Good(nn")))
            text = summary.contents.value if summary else ""
            if "measured peak" in text:
                break
            await asyncio.sleep(0.2)
        assert "| measured peak of one forward + backward (cuda) |" in text, text

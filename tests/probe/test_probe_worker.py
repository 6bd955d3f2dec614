"""The shape probe's worker, run for real: the user's code in a sandboxed process of its own.

Every test starts the real worker (`server/shapes/probe/worker.py`) with this test run's
interpreter, which has torch, and probes small models written to a temporary folder.
"""
from __future__ import annotations

import os
import stat
import sys
import textwrap
from pathlib import Path

import pytest

from torch_lsp.shapes.probe.client import ProbeClient, ProbeOptions
from tests.shapes.conftest import require_torch

MODELS = '''
import os
import torch
import torch.nn as nn
from dataclasses import dataclass

open(os.path.join(os.path.dirname(__file__), "TOP_LEVEL_RAN"), "w").write("x")
os.system("touch " + os.path.join(os.path.dirname(__file__), "SYSTEM_RAN"))


@dataclass
class Config:
    width: int = 32
    classes: int = 10


class Conv(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.head = nn.Linear(8 * 30 * 30, 10)

    def forward(self, x):
        return self.head(self.conv(x).flatten(1))


class Spectral(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(64, 16)

    def forward(self, x):
        spectrum = torch.fft.rfft(x).abs()
        return self.proj(spectrum)


class Configured(nn.Module):
    def __init__(self, config: Config):
        super().__init__()
        print("building", config)
        self.fc = nn.Linear(config.width, config.classes)

    def forward(self, x):
        os.write(1, b"not json at all\\n")
        return self.fc(x)


class Spin(nn.Module):
    def forward(self, x):
        while True:
            pass


class Bomb(nn.Module):
    def forward(self, x):
        hoard = bytearray(64 * 2**30)
        return x


if __name__ == "__main__":
    open("MAIN_RAN", "w").write("x")
'''

SIBLING = '''
import torch.nn as nn
import os

os.system("touch " + os.path.join(os.path.dirname(__file__), "SIBLING_RAN"))


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        return self.fc(x).relu()
'''

USES_SIBLING = '''
import torch.nn as nn
from blocks import Block


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.Sequential(Block(16), Block(16))

    def forward(self, x):
        return self.blocks(x)
'''


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("probe")
    (folder / "models.py").write_text(MODELS)
    (folder / "blocks.py").write_text(SIBLING)
    (folder / "stack.py").write_text(USES_SIBLING)
    return folder


@pytest.fixture(scope="module")
def client(workspace):
    require_torch()
    client = ProbeClient(sys.executable, ProbeOptions(timeout=30, memory=4096), cwd=str(workspace))
    yield client
    client.close()


def request(workspace: Path, file: str, target: str, shape: list[int], init: str | None = None, **extra) -> dict:
    path = workspace / file
    return {"path": str(path), "source": path.read_text(), "roots": [target], "init": init or f"{target}()",
            "inputs": [{"shape": shape, "batch_dim": 0}], "folders": [str(workspace)], **extra}


def line_of(workspace: Path, file: str, text: str) -> int:
    lines = (workspace / file).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def test_submodule_shapes_and_a_batch_that_varies(client, workspace):
    answer = client.probe(request(workspace, "models.py", "Conv", [4, 3, 32, 32], vary_batch=5))
    assert answer["ok"], answer
    assert answer["output"] == [4, 10]
    assert answer["submodules"]["conv"] == {"type": "Conv2d", "outputs": [[4, 8, 30, 30]]}
    assert answer["varied"]["output"] == [5, 10]
    assert answer["device"] == "meta"


def test_a_mismatch_static_analysis_cannot_see_names_its_line(client, workspace):
    answer = client.probe(request(workspace, "models.py", "Spectral", [4, 64], cpu_fallback_bytes=10**8))
    assert not answer["ok"] and answer["shape_error"]
    # rfft of 64 samples has 33 bins; the layer expects 64: the user's own run says so on the CPU.
    assert answer["error"] == "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x33 and 64x16)"
    assert answer["frames"][-1]["line"] == line_of(workspace, "models.py", "return self.proj(spectrum)")


def test_module_level_code_is_never_executed(client, workspace):
    answer = client.probe(request(workspace, "models.py", "Conv", [2, 3, 32, 32]))
    assert answer["ok"], answer
    assert not any((workspace / name).exists() for name in ("TOP_LEVEL_RAN", "SYSTEM_RAN", "MAIN_RAN"))


def test_constructor_arguments_from_a_config_dataclass_and_output_kept_apart(client, workspace):
    answer = client.probe(request(workspace, "models.py", "Configured", [3, 48],
                                  init="Configured(Config(width=48, classes=7))"))
    assert answer["ok"], answer
    assert answer["output"] == [3, 7]
    assert "building Config(width=48, classes=7)" in answer["output_text"]


def test_a_sibling_module_is_imported_without_its_side_effects(client, workspace):
    answer = client.probe(request(workspace, "stack.py", "Stack", [5, 16]))
    assert answer["ok"], answer
    assert answer["output"] == [5, 16]
    assert answer["submodules"]["blocks.0.fc"]["outputs"] == [[5, 16]]
    assert not (workspace / "SIBLING_RAN").exists()


def test_an_endless_forward_is_stopped_and_the_worker_restarted(workspace):
    require_torch()
    client = ProbeClient(sys.executable, ProbeOptions(timeout=3), cwd=str(workspace))
    try:
        answer = client.probe(request(workspace, "models.py", "Spin", [2, 4]))
        assert not answer["ok"] and answer["timeout"] and not answer["shape_error"]
        assert "did not finish within 3 s" in answer["error"]
        client.options = ProbeOptions(timeout=60)  # the restart imports torch again: slow on a busy machine
        again = client.probe(request(workspace, "models.py", "Conv", [2, 3, 32, 32]))
        assert again["ok"] and client.starts == 2
    finally:
        client.close()


def test_a_memory_bomb_costs_one_probe(client, workspace):
    answer = client.probe(request(workspace, "models.py", "Bomb", [2, 4]))
    assert not answer["ok"] and not answer["shape_error"]
    assert answer["kind"] == "MemoryError"
    assert client.probe(request(workspace, "models.py", "Conv", [2, 3, 32, 32]))["ok"]


def test_memory_estimate_matches_what_a_cpu_run_keeps_for_backward(client, workspace):
    torch = require_torch()
    source = textwrap.dedent('''
        import torch.nn as nn

        class Mlp(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 10))

            def forward(self, x):
                return self.net(x)
    ''')
    (workspace / "mlp.py").write_text(source)
    answer = client.probe(request(workspace, "mlp.py", "Mlp", [32, 64], memory=True, optimizer="adam"))
    assert answer["ok"], answer
    estimate = answer["memory"]

    namespace: dict = {}
    exec(compile(source, "mlp.py", "exec"), namespace)
    model = namespace["Mlp"]()
    storages: dict[int, int] = {}
    parameters = {p.data_ptr() for p in model.parameters()}

    def pack(tensor):
        if tensor.data_ptr() not in parameters:
            storages[tensor.untyped_storage().data_ptr()] = tensor.untyped_storage().nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        model(torch.randn(32, 64, requires_grad=False))
    parameter_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    assert estimate["parameters"] == parameter_bytes == (64 * 256 + 256 + 256 * 10 + 10) * 4
    assert estimate["gradients"] == parameter_bytes
    assert estimate["optimizer_state"] == 2 * parameter_bytes
    assert estimate["activations"] == sum(storages.values())


def test_an_interpreter_without_torch_gets_one_clear_message(tmp_path, workspace):
    no_torch = tmp_path / "python-without-torch"
    no_torch.write_text(f"#!/bin/sh\nexec {sys.executable} -S \"$@\"\n")
    no_torch.chmod(no_torch.stat().st_mode | stat.S_IEXEC)
    client = ProbeClient(str(no_torch), ProbeOptions(timeout=10), cwd=str(workspace))
    try:
        answer = client.probe(request(workspace, "models.py", "Conv", [2, 3, 32, 32]))
    finally:
        client.close()
    assert not answer["ok"] and answer["no_torch"]
    assert answer["error"].startswith("torch is not installed in the probe's Python")


def test_close_leaves_no_process_behind(workspace):
    require_torch()
    client = ProbeClient(sys.executable, ProbeOptions(timeout=30), cwd=str(workspace))
    assert client.probe(request(workspace, "models.py", "Conv", [2, 3, 32, 32]))["ok"]
    pid = client.process.pid
    client.close()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


SCRIPT = '''
import os
import torch
import torch.nn as nn
import torch.nn.functional as F

features = torch.rand(10, 32, 28, 28)
conv = nn.Conv2d(32, 64, 3)
maps = conv(features)
torch.save(maps, "SAVED.pt")
os.system("touch SCRIPT_SYSTEM_RAN")
pooled = F.max_pool2d(maps, 2)
for step in range(3):
    open("LOOP_RAN", "w")
head = nn.Linear(64 * 13 * 13, 10)
logits = head(pooled.flatten(1))
wrong = head(pooled)
'''


def test_a_script_runs_its_tensor_statements_only_and_fails_on_the_right_line(client, workspace):
    (workspace / "script.py").write_text(SCRIPT)
    answer = client.probe({"op": "script", "path": str(workspace / "script.py"), "source": SCRIPT,
                           "folders": [str(workspace)], "cpu_fallback_bytes": 10**8})
    assert answer["ok"], answer
    [failed] = answer["failures"]  # the statements after it still ran
    assert failed["shape_error"]
    assert failed["frames"][-1]["line"] == SCRIPT.splitlines().index("wrong = head(pooled)") + 1
    assert failed["error"].startswith("RuntimeError: mat1 and mat2 shapes cannot be multiplied (8320x13 and 10816x10)")
    assert not any((workspace / name).exists() for name in ("SAVED.pt", "SCRIPT_SYSTEM_RAN", "LOOP_RAN"))
    assert not any(Path(name).exists() for name in ("SAVED.pt", "SCRIPT_SYSTEM_RAN", "LOOP_RAN"))


def test_a_script_that_runs_reports_each_binding(client, workspace):
    source = SCRIPT.replace("wrong = head(pooled)\n", "")
    answer = client.probe({"op": "script", "path": str(workspace / "script.py"), "source": source,
                           "folders": [str(workspace)]})
    assert answer["ok"], answer
    by_line = {b["line"]: b["shapes"] for b in answer["bindings"]}
    lines = source.splitlines()
    assert by_line[lines.index("maps = conv(features)") + 1] == {"maps": [10, 64, 26, 26]}
    assert by_line[lines.index("logits = head(pooled.flatten(1))") + 1] == {"logits": [10, 10]}


def test_cuda_falls_back_to_meta_with_a_note_where_there_is_no_gpu(workspace):
    torch = require_torch()
    client = ProbeClient(sys.executable, ProbeOptions(device="cuda", timeout=60), cwd=str(workspace))
    try:
        answer = client.probe(request(workspace, "models.py", "Conv", [2, 3, 32, 32], memory=True))
    finally:
        client.close()
    assert answer["ok"], answer
    if torch.cuda.is_available():  # a machine with a GPU: the tiny run is real, and measured
        assert answer["device"] == "cuda" and answer["memory"]["measured_peak"] > 0
    else:
        assert answer["device"] == "meta"
        assert answer["note"] == "CUDA is not available in the probe's Python, so the probe ran on meta tensors instead."
    assert answer["output"] == [2, 10]

"""TL406 is silent in inference-only code: a file that evaluates (`model.eval()`, `no_grad`)
and never backpropagates. A file that builds `DistributedDataParallel` (a wrapper whose point is
syncing gradients) prepares training even when its loop lives in another file."""
from __future__ import annotations

from torch_lsp.checker import check_source
from torch_lsp.settings import Settings

HEAD = "import torch\nimport torch.nn as nn\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n\n\n"


def _tl406_lines(source: str) -> list[int]:
    return sorted(f.line for f in check_source(HEAD + source, "launch.py", Settings()).findings if f.code == "TL406")


def test_inference_script_is_silent():
    assert _tl406_lines("def predict(model, x):\n    model = nn.DataParallel(model).eval()\n    return model(x)\n") == []


def test_file_that_builds_ddp_prepares_training():
    source = ("def build_teacher(teacher, gpus):\n    return nn.DataParallel(teacher, device_ids=gpus).eval()\n\n\n"
              "def build_student(student, rank):\n    return DDP(student.to(rank), device_ids=[rank])\n")
    assert _tl406_lines(source) == [7]

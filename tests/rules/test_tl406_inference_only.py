"""TL406 is silent in inference-only code: a file that evaluates (`model.eval()`, `no_grad`)
and never backpropagates. The builtin `eval(...)` of a string is no evaluation of a model, and a
file that builds `DistributedDataParallel` prepares training even when its loop lives elsewhere."""
from __future__ import annotations

from torch_lsp.checker import check_source
from torch_lsp.settings import Settings

HEAD = "import torch\nimport torch.nn as nn\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n\n\n"


def _tl406_lines(source: str) -> list[int]:
    return sorted(f.line for f in check_source(HEAD + source, "launch.py", Settings()).findings if f.code == "TL406")


def test_inference_script_is_silent():
    assert _tl406_lines("def predict(model, x):\n    model = nn.DataParallel(model).eval()\n    return model(x)\n") == []


def test_builtin_eval_of_a_string_is_no_evaluation():
    source = ("def build(cfg, model):\n    dataset = eval('datasets.' + cfg.name)()\n"
              "    if torch.cuda.device_count() > 1:\n        model = nn.DataParallel(model)\n    return model, dataset\n")
    assert _tl406_lines(source) == [9]


def test_file_that_builds_ddp_prepares_training():
    source = ("def build_teacher(teacher, gpus):\n    return nn.DataParallel(teacher, device_ids=gpus).eval()\n\n\n"
              "def build_student(student, rank):\n    return DDP(student.to(rank), device_ids=[rank])\n")
    assert _tl406_lines(source) == [7]

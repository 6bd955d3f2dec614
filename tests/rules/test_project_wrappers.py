"""Project decorators and context managers that turn autograd off, followed into other files."""
from __future__ import annotations

import textwrap
from pathlib import Path

from torch_lsp.checker import check_source
from torch_lsp.project_wrappers import grad_off_wrappers
from torch_lsp.analysis import analyze
from torch_lsp.settings import Selection, Settings

TORCH_UTILS = '''
import contextlib
import torch


def smart_inference_mode(torch_1_9=True):
    def decorate(fn):
        return (torch.inference_mode if torch_1_9 else torch.no_grad)()(fn)
    return decorate


@contextlib.contextmanager
def frozen():
    with torch.no_grad():
        yield


def timed(fn):
    return fn
'''

VAL = '''
import torch
from utils.torch_utils import smart_inference_mode, frozen, timed


@smart_inference_mode()
def run(model, loader):
    model.eval()
    return [model(x) for x in loader]


@timed
def validate_timed(model, loader):
    model.eval()
    return [model(x) for x in loader]


def run_frozen(model, loader):
    model.eval()
    with frozen():
        return [model(x) for x in loader]


@smart_inference_mode()
def tune(model, x, criterion, y):
    loss = criterion(model(x), y)
    loss.backward()
'''


def _codes(path: Path, *codes: str) -> list[tuple[str, int]]:
    settings = Settings().with_selection(Selection(select=codes))
    result = check_source(path.read_text(), str(path), settings)
    return sorted((f.code, f.line) for f in result.findings)


def _project(tmp_path: Path) -> Path:
    (tmp_path / "utils").mkdir()
    (tmp_path / "utils" / "__init__.py").write_text("")
    (tmp_path / "utils" / "torch_utils.py").write_text(TORCH_UTILS)
    (tmp_path / "segment").mkdir()
    script = tmp_path / "segment" / "val.py"
    script.write_text(VAL)
    return script


def test_wrappers_of_a_file_are_recorded(tmp_path):
    script = _project(tmp_path)
    utils = tmp_path / "utils" / "torch_utils.py"
    table = grad_off_wrappers(analyze(utils.read_text(), str(utils)))
    assert set(table) == {"smart_inference_mode", "frozen"}
    assert table["smart_inference_mode"].as_decorator and not table["smart_inference_mode"].as_context
    assert table["frozen"].as_context
    assert script.exists()


def test_imported_wrapper_from_a_folder_above_turns_grad_off(tmp_path):
    script = _project(tmp_path)
    # `run` and `run_frozen` run without autograd; `validate_timed` does not; `tune` backpropagates
    # a loss computed with autograd off (inference mode): TL107.
    assert _codes(script, "TL302", "TL107") == [("TL107", 27), ("TL302", 15)]


def test_files_importing_each_other_terminate(tmp_path):
    (tmp_path / "a.py").write_text("import torch\nfrom b import deco\n\n@deco\ndef f():\n    pass\n\n"
                                   "def wrap(fn):\n    return torch.no_grad()(fn)\n")
    (tmp_path / "b.py").write_text("import torch\nfrom a import wrap\n\n@wrap\ndef deco(fn):\n    return fn\n")
    analysis = analyze((tmp_path / "a.py").read_text(), str(tmp_path / "a.py"))
    assert not [f for f in analysis.functions if f.name == "f"][0].no_grad_decorated


def test_a_wrapper_imported_relatively_is_followed(tmp_path):
    # `from ..utils.torch_utils import ...` inside a package, and `from .` beside it.
    package = tmp_path / "project"
    (package / "utils").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "utils" / "__init__.py").write_text("")
    (package / "utils" / "torch_utils.py").write_text(TORCH_UTILS)
    (package / "segment").mkdir()
    (package / "segment" / "__init__.py").write_text("")
    script = package / "segment" / "val.py"
    script.write_text(VAL.replace("from utils.torch_utils import", "from ..utils.torch_utils import"))
    assert _codes(script, "TL302", "TL107") == [("TL107", 27), ("TL302", 15)]
    (package / "segment" / "torch_utils.py").write_text(TORCH_UTILS)
    script.write_text(VAL.replace("from utils.torch_utils import", "from .torch_utils import"))
    assert _codes(script, "TL302", "TL107") == [("TL107", 27), ("TL302", 15)]

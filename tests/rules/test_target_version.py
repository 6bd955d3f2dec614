"""Rules judged against the PyTorch the project runs: `target-version` in the pyproject, else
the torch installed in the project's `.venv` (its dist-info folder), else the newest.  Run
through the real CLI."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SOURCE = """\
import torch

x, _ = torch.solve(b, A)
with torch.cuda.amp.autocast():
    state = torch.load("model.pt")
"""


def findings(folder: Path) -> dict[int, tuple[str, str, str]]:
    """{line: (code, severity, message)} of `check` on the project's train.py."""
    result = subprocess.run([sys.executable, "-m", "torch_lsp", "check", "--format", "json", "--select", "TL7",
                             str(folder / "train.py")], capture_output=True, text=True, timeout=120)
    return {f["line"]: (f["code"], f["severity"], f["message"]) for f in json.loads(result.stdout)}


def project(tmp_path: Path, table: str = "") -> Path:
    (tmp_path / "train.py").write_text(SOURCE)
    (tmp_path / "pyproject.toml").write_text(f"[tool.torch-lsp]\nselect = [\"TL7\"]\n{table}")
    return tmp_path


def test_the_newest_pytorch_by_default(tmp_path: Path):
    found = findings(project(tmp_path))
    assert found[3][:2] == ("TL701", "error") and "raises `AttributeError` on the newest PyTorch" in found[3][2]
    assert found[4][:2] == ("TL704", "warning") and "deprecated since PyTorch 2.4" in found[4][2]
    assert found[5][:2] == ("TL705", "information")  # weights_only is True by default from 2.6


def test_target_version_in_the_pyproject(tmp_path: Path):
    found = findings(project(tmp_path, 'target-version = "2.3"\n'))
    assert found[3][:2] == ("TL701", "error") and "on PyTorch 2.3" in found[3][2]
    assert 4 not in found  # torch.cuda.amp.autocast is deprecated only from 2.4
    assert found[5][:2] == ("TL705", "warning") and "on PyTorch 2.3" in found[5][2]


def test_an_old_target_sees_a_removed_function_as_deprecated(tmp_path: Path):
    found = findings(project(tmp_path, 'target-version = "1.12"\n'))
    assert found[3][:2] == ("TL704", "warning") and "removed in 2.0" in found[3][2]


def test_the_version_installed_in_the_projects_venv(tmp_path: Path):
    folder = project(tmp_path)
    site = folder / ".venv" / "lib" / "python3.11" / "site-packages"
    (site / "torch-2.1.2+cu121.dist-info").mkdir(parents=True)
    (folder / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    found = findings(folder)
    assert found[5][:2] == ("TL705", "warning") and "on PyTorch 2.1" in found[5][2]
    assert 4 not in found


def test_an_invalid_target_version_is_reported_and_ignored(tmp_path: Path):
    folder = project(tmp_path, 'target-version = "latest"\n')
    result = subprocess.run([sys.executable, "-m", "torch_lsp", "check", str(folder / "train.py")],
                            capture_output=True, text=True, timeout=120)
    assert "`target-version` must be a PyTorch version such as \"2.4\"" in result.stderr
    assert "TL701" in result.stdout

"""What a user installs: the wheel's contents and metadata, and `pipx install .` /
`uv tool install .` from a clone, each into a scratch location, then `torch-lsp check`
run from an empty folder on a file with a bug, as a user would after installing.

pipx and uv come with the test extra; they fetch the dependencies from the package
index, as they do for a user.
"""
from __future__ import annotations

import email
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BUGGY = """import torch.nn.functional as F


def probabilities(logits):
    return F.softmax(logits)
"""
INSTALL_TIMEOUT_S = 600


def wheel_metadata(wheel: Path) -> email.message.Message:
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        return email.message_from_bytes(archive.read(name))


def test_the_wheel_carries_the_license_and_only_the_torch_lsp_package(built_wheel: Path):
    with zipfile.ZipFile(built_wheel) as archive:
        names = archive.namelist()
        license_names = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
        assert license_names, names
        assert archive.read(license_names[0]) == (REPO / "LICENSE").read_bytes()
    assert (REPO / "LICENSE").read_text().startswith("MIT License")
    top_level = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert top_level == {"torch_lsp"}


def test_the_wheel_metadata_names_the_license_project_urls_and_classifiers(built_wheel: Path):
    metadata = wheel_metadata(built_wheel)
    classifiers = metadata.get_all("Classifier")
    assert "License :: OSI Approved :: MIT License" in classifiers
    assert any(c.startswith("Programming Language :: Python :: 3.1") for c in classifiers)
    urls = dict(url.split(", ", 1) for url in metadata.get_all("Project-URL"))
    assert {"Homepage", "Source", "Issues", "Documentation"} <= set(urls)
    assert all(url.startswith("https://") for url in urls.values())
    assert metadata["License-File"] == "LICENSE"


def buggy_project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "model.py").write_text(BUGGY)
    return folder


def assert_checks_the_buggy_file(torch_lsp: Path, folder: Path, env: dict[str, str]) -> None:
    """`torch-lsp check` with no argument, from the project folder: finds the bug, exits 1."""
    completed = subprocess.run([str(torch_lsp), "check"], cwd=folder, env=env, capture_output=True, text=True,
                               timeout=120)
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert "model.py:5:12: TL201" in completed.stdout, completed.stdout + completed.stderr


def clean_environment(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The user's environment without this test run's Python on the path: only what was installed counts."""
    env = {key: value for key, value in os.environ.items()
           if key not in {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME"}}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if Path(p).resolve() != Path(sys.executable).parent.resolve())
    env["HOME"] = str(tmp_path / "home")
    return {**env, **extra}


def run_installer(command: list[str], env: dict[str, str]) -> None:
    completed = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S)
    assert completed.returncode == 0, f"{command} failed:\n{completed.stdout[-3000:]}\n{completed.stderr[-3000:]}"


def test_pipx_install_from_the_clone_gives_a_working_torch_lsp(tmp_path: Path):
    pipx_bin = tmp_path / "pipx-bin"
    env = clean_environment(tmp_path, PIPX_HOME=str(tmp_path / "pipx-home"), PIPX_BIN_DIR=str(pipx_bin),
                            PIPX_MAN_DIR=str(tmp_path / "pipx-man"))
    run_installer([sys.executable, "-m", "pipx", "install", "--python", sys.executable, str(REPO)], env)
    assert_checks_the_buggy_file(pipx_bin / "torch-lsp", buggy_project(tmp_path), env)


def test_uv_tool_install_from_the_clone_gives_a_working_torch_lsp(tmp_path: Path):
    uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    if uv is None:  # the test extra installs uv; a missing one is a broken test environment
        pytest.fail("uv is not installed: `pip install -e '.[test]'` installs it")
    tool_bin = tmp_path / "uv-bin"
    env = clean_environment(tmp_path, UV_TOOL_DIR=str(tmp_path / "uv-tools"), UV_TOOL_BIN_DIR=str(tool_bin),
                            UV_CACHE_DIR=str(tmp_path / "uv-cache"), UV_PYTHON_DOWNLOADS="never")
    run_installer([uv, "tool", "install", "--python", sys.executable, str(REPO)], env)
    assert_checks_the_buggy_file(tool_bin / "torch-lsp", buggy_project(tmp_path), env)

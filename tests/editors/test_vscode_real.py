"""The extension in a real VS Code: the built .vsix installed into code-server (VS Code's workbench
served to a browser), driven in Chromium with the keyboard as a user would.

With no torch-lsp setting and no `torch-lsp` on PATH, the extension starts the server it ships.
In a Python file the Problems panel lists TL201, a hover on a tensor shows its shape, and the
TL201 quick fix, picked from the Ctrl+. menu and saved, writes `dim=-1` into the file on disk.
A Jupyter notebook opens with VS Code's own ipynb support (no Jupyter extension, no kernel), the
server answers in its cell (a shape inlay hint), the same bug in the cell is listed in the Problems
panel (pushed to the cell: the bundled language client never pulls for cells), and its quick fix,
picked from the Ctrl+. menu at the finding and saved, writes `dim=-1` into the cell on disk.

The recipe that installs code-server, Playwright and Chromium is ../shared/tools/vscode_real/setup.sh
(CI runs it); the test reads its folder from TORCH_LSP_VSCODE_REAL (default ~/.cache/vscode-real)
and is skipped when it is missing, unless TORCH_LSP_REQUIRE_EDITORS is set (as CI sets it), where
that is a failure.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from tests.editors.headless import unavailable
from tests.editors.vscode_build import build_extension, user_environment

# The build (npm ci, npm test, packaging) takes minutes on a loaded machine, then the editor about one.
pytestmark = pytest.mark.timeout(1200)

DRIVER = Path(__file__).with_name("vscode_real_driver.py")
CHROMIUM = "/usr/bin/chromium"
STARTUP_TIMEOUT_S = 120
DRIVER_TIMEOUT_S = 420

SCRIPT = "train.py"
SCRIPT_TEXT = (
    "import torch\n"
    "import torch.nn.functional as F\n"
    "\n"
    "\n"
    "def probabilities():\n"
    "    x = torch.randn(8, 3)\n"
    "    return F.softmax(x)\n"
)
SCRIPT_LINE = 7
FIX_COLUMN = SCRIPT_TEXT.splitlines()[SCRIPT_LINE - 1].index("F.softmax") + 1
HOVER_COLUMN = SCRIPT_TEXT.splitlines()[SCRIPT_LINE - 1].index("(x)") + 2  # on the `x` in softmax(x)
NOTEBOOK = "analysis.ipynb"
NOTEBOOK_CELL = "import torch\nimport torch.nn.functional as F\n\nscores = torch.randn(4, 5)\nweights = F.softmax(scores)\n"
NOTEBOOK_LINE = NOTEBOOK_CELL.splitlines().index("weights = F.softmax(scores)") + 1  # in the cell's own lines


def recipe_or_skip() -> Path:
    folder = Path(os.environ.get("TORCH_LSP_VSCODE_REAL") or Path.home() / ".cache" / "vscode-real")
    missing = [p for p in (folder / "bin" / "code-server", folder / "py" / "bin" / "python", Path(CHROMIUM))
               if not p.exists()]
    if missing:
        unavailable(f"no real VS Code to drive: {', '.join(map(str, missing))} missing. "
                    "Run `bash ../shared/tools/vscode_real/setup.sh` (code-server, Playwright, Chromium) "
                    "and point TORCH_LSP_VSCODE_REAL at its folder.")
    return folder


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def write_notebook(path: Path, cells: list[str]) -> None:
    """An nbformat 4 notebook of code cells, with no outputs, as Jupyter writes one."""
    path.write_text(json.dumps({
        "cells": [{"cell_type": "code", "execution_count": None, "id": f"cell-{i}", "metadata": {}, "outputs": [],
                   "source": text.splitlines(keepends=True)} for i, text in enumerate(cells)],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                     "language_info": {"name": "python"}},
        "nbformat": 4, "nbformat_minor": 5,
    }, indent=1))


def wait_until_serving(url: str, server: subprocess.Popen, log: Path, what: str = "code-server",
                       health: str = "/healthz") -> None:
    """Wait until the web server answers `health`; fail with its log if it exits or never does."""
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        assert server.poll() is None, f"{what} exited ({server.returncode}):\n{log.read_text()[-4000:]}"
        try:
            with urllib.request.urlopen(f"{url}{health}", timeout=5):
                return
        except OSError:
            time.sleep(0.5)
    pytest.fail(f"{what} did not answer on {url} in {STARTUP_TIMEOUT_S}s:\n{log.read_text()[-4000:]}")


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """What a user saw in a real VS Code with the built .vsix, plus the script's text afterwards."""
    recipe = recipe_or_skip()
    vsix = build_extension(tmp_path_factory.mktemp("vscode-extension")).vsix
    home = tmp_path_factory.mktemp("vscode-real")
    user_data, extensions, project, shots = (home / name for name in ("user-data", "extensions", "project", "shots"))
    for folder in (user_data / "User", project, shots):
        folder.mkdir(parents=True)
    # Only the workbench's own prompts are turned off; no torch-lsp setting at all.
    (user_data / "User" / "settings.json").write_text(json.dumps({
        "security.workspace.trust.enabled": False,
        "workbench.startupEditor": "none",
        "extensions.autoCheckUpdates": False,
        "telemetry.telemetryLevel": "off",
    }))
    (project / SCRIPT).write_text(SCRIPT_TEXT)
    write_notebook(project / NOTEBOOK, [NOTEBOOK_CELL])
    code_server = str(recipe / "bin" / "code-server")
    dirs = ["--user-data-dir", str(user_data), "--extensions-dir", str(extensions)]
    env = user_environment()
    installed = subprocess.run([code_server, *dirs, "--install-extension", str(vsix)], env=env,
                               capture_output=True, text=True, timeout=STARTUP_TIMEOUT_S)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert any(p.name.startswith("torch-lsp.torch-lsp-") for p in extensions.iterdir()), installed.stdout

    url = f"http://127.0.0.1:{free_port()}"
    log = home / "code-server.log"
    with log.open("w") as output:
        server = subprocess.Popen(
            [code_server, *dirs, "--bind-addr", url.removeprefix("http://"), "--auth", "none",
             "--disable-telemetry", "--disable-update-check", str(project)],
            env=env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_until_serving(url, server, log)
        arguments = {"url": url, "folder": str(project), "script": SCRIPT, "script_line": SCRIPT_LINE,
                     "hover_column": HOVER_COLUMN, "fix_column": FIX_COLUMN, "notebook": NOTEBOOK,
                     "notebook_line": NOTEBOOK_LINE,
                     "screenshots": str(shots), "chromium": CHROMIUM}
        driven = subprocess.run([str(recipe / "py" / "bin" / "python"), str(DRIVER), json.dumps(arguments)],
                                capture_output=True, text=True, timeout=DRIVER_TIMEOUT_S)
        assert driven.returncode == 0, driven.stdout + driven.stderr
    finally:
        # code-server and its children (the extension host, the server) are its own process group.
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
    result = json.loads(driven.stdout)
    result["script_after"] = (project / SCRIPT).read_text()
    result["notebook_after"] = "".join(
        "".join(cell["source"]) for cell in json.loads((project / NOTEBOOK).read_text())["cells"])
    result["where"] = f"screenshots in {shots}, code-server's log in {log}"
    return result


def test_a_python_file_shows_the_diagnostic_in_the_problems_panel(seen: dict) -> None:
    assert "TL201" in seen.get("script_problems", ""), seen
    assert SCRIPT in seen["script_problems"], seen


def test_hovering_a_tensor_shows_its_shape(seen: dict) -> None:
    assert "x: Tensor[8, 3]" in seen.get("hover", ""), seen


def test_the_quick_fix_picked_from_the_menu_rewrites_the_file(seen: dict) -> None:
    assert any("dim=-1" in title for title in seen.get("quick_fix_titles", [])), seen
    assert seen["script_after"] == SCRIPT_TEXT.replace("F.softmax(x)", "F.softmax(x, dim=-1)"), seen


def test_a_notebook_opens_as_a_notebook_and_the_server_answers_in_its_cell(seen: dict) -> None:
    # VS Code's own ipynb support opens it (no Jupyter extension, no kernel); the shape inlay
    # hint in the cell is the server's answer about that cell.
    cell = seen.get("notebook_cells", "")
    assert "F.softmax(scores)" in cell and "[4, 5]" in cell, seen


def test_a_notebook_cell_shows_the_diagnostic_in_the_problems_panel(seen: dict) -> None:
    problems = seen.get("notebook_problems", "")
    # The script's own TL201 is fixed by now: the one listed is the notebook cell's.
    assert NOTEBOOK in problems and "TL201" in problems, seen


def test_the_notebook_quick_fix_picked_from_the_menu_rewrites_the_cell(seen: dict) -> None:
    assert any("dim=-1" in title for title in seen.get("notebook_fix_titles", [])), seen
    assert seen["notebook_after"] == NOTEBOOK_CELL.replace("F.softmax(scores)", "F.softmax(scores, dim=-1)"), seen

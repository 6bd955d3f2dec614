"""torch-lsp in a real JupyterLab: jupyterlab-lsp finds it through its jupyter-lsp entry point, with
no configuration, and a notebook opened in Chromium shows its diagnostic in the right cell.

The notebook defines a tensor in its first cell and passes it to `F.softmax` without `dim` in the
second: the TL201 underline must be in the second cell (the cells are one program, positions are
the cell's own), and hovering it shows torch-lsp's message. The browser comes from the same recipe
as the VS Code test (../shared/tools/vscode_real/setup.sh: Playwright and Chromium); JupyterLab and
jupyterlab-lsp are test dependencies. The screenshot stays in the test's temporary folder.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.editors.headless import unavailable
from tests.editors.test_vscode_real import CHROMIUM, free_port, recipe_or_skip, wait_until_serving, write_notebook

pytestmark = pytest.mark.timeout(600)

DRIVER = Path(__file__).with_name("jupyterlab_real_driver.py")
DRIVER_TIMEOUT_S = 300
NOTEBOOK = "train.ipynb"
CELLS = [
    "import torch\nimport torch.nn.functional as F\n\nlogits = torch.randn(8, 3)\n",
    "probabilities = F.softmax(logits)\n",
]
LAB_SETTINGS = {"language_servers": {"torch-lsp": {"priority": 100}}}


def require_jupyterlab() -> None:
    missing = [name for name in ("jupyterlab", "jupyter_lsp") if not importable(name)]
    if not missing:
        return
    unavailable(f"{' and '.join(missing)} not installed in this Python: install the test extra "
                "(`pip install -c constraints.txt -e '.[test]'`) to run the JupyterLab test.")


def importable(name: str) -> bool:
    import importlib.util
    return importlib.util.find_spec(name) is not None


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory) -> dict:
    recipe = recipe_or_skip()
    require_jupyterlab()
    home = tmp_path_factory.mktemp("jupyterlab-real")
    project, shots = home / "project", home / "shots"
    for folder in (project, shots):
        folder.mkdir()
    write_notebook(project / NOTEBOOK, CELLS)
    # jupyterlab-lsp uses one server per language, the one of highest priority: where another Python
    # server is installed too (jedi-language-server, pylsp), the user gives torch-lsp priority, as the
    # README says. The test does the same, so that it runs whatever else this environment holds.
    settings = home / "lab-settings" / "@jupyter-lsp" / "jupyterlab-lsp"
    settings.mkdir(parents=True)
    (settings / "plugin.jupyterlab-settings").write_text(json.dumps(LAB_SETTINGS))
    # Jupyter's own folders inside the test's: no user configuration is read, none is written.
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(home / "config"), JUPYTER_RUNTIME_DIR=str(home / "runtime"),
               JUPYTERLAB_SETTINGS_DIR=str(home / "lab-settings"),
               IPYTHONDIR=str(home / "ipython"), PATH=os.pathsep.join([str(Path(sys.executable).parent),
                                                                        os.environ.get("PATH", "")]))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = home / "jupyterlab.log"
    with log.open("w") as output:
        server = subprocess.Popen(
            [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
             "--ServerApp.token=", "--ServerApp.password=", "--ServerApp.disable_check_xsrf=True",
             "--allow-root", f"--ServerApp.root_dir={project}"],
            env=env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_until_serving(url, server, log, "JupyterLab", "/api/status")
        arguments = {"url": url, "notebook": NOTEBOOK, "cell": 1, "screenshots": str(shots), "chromium": CHROMIUM}
        driven = subprocess.run([str(recipe / "py" / "bin" / "python"), str(DRIVER), json.dumps(arguments)],
                                capture_output=True, text=True, timeout=DRIVER_TIMEOUT_S)
        assert driven.returncode == 0, driven.stdout + driven.stderr
    finally:
        os.killpg(server.pid, signal.SIGTERM)  # JupyterLab, its kernel and the language server
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
    result = json.loads(driven.stdout)
    result["where"] = f"screenshot in {shots}, JupyterLab's log in {log}"
    return result


def test_the_notebook_shows_the_diagnostic_in_the_cell_that_has_the_bug(seen: dict) -> None:
    assert seen["underlined_cells"] == [1], seen
    assert seen["underlined_text"] == "F.softmax(logits)", seen


def test_hovering_it_shows_torch_lsps_message(seen: dict) -> None:
    tooltip = seen.get("tooltip", "")
    assert "`F.softmax(logits)` has no `dim`" in tooltip and "torch-lsp" in tooltip, seen

"""Builds the VS Code extension the way a user or CI builds it, into a scratch folder:
`npm ci`, its own unit tests (`npm test`) and `npm run package`, which bundles this checkout's
server into the .vsix. Shared by the packaging test and the real-VS-Code test."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.editors.headless import unavailable

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
EXTENSION = REPO_ROOT / "editors" / "vscode"
NPM_TIMEOUT_S = 600


@dataclass(frozen=True)
class Build:
    folder: Path
    node: str
    test_output: str
    vsix: Path


def npm_or_skip() -> str:
    npm = shutil.which("npm")
    if npm and shutil.which("node"):
        return npm
    unavailable("Node.js and npm are not on PATH, so the VS Code extension cannot be built. "
                "Install Node.js 20 or newer with npm.")


def run(command: list[str], folder: Path, **env: str) -> str:
    """Runs a build step; its output is the failure message when it fails."""
    result = subprocess.run(
        command, cwd=folder, env={**os.environ, **env}, capture_output=True, text=True, timeout=NPM_TIMEOUT_S
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"`{' '.join(command)}` in {folder} failed ({result.returncode}):\n{output[-6000:]}"
    return output


def build_extension(scratch: Path) -> Build:
    """Builds the extension in `scratch`/vscode and returns the build, with its one .vsix."""
    npm = npm_or_skip()
    # A copy, so a developer's node_modules, out/ and dist/ are neither used nor touched.
    folder = scratch / "vscode"
    shutil.copytree(EXTENSION, folder, ignore=shutil.ignore_patterns("node_modules", "out", "dist", "*.vsix"))
    run([npm, "ci"], folder)
    # The install check's positive case runs against the interpreter these tests run in.
    test_output = run([npm, "test"], folder, TORCH_LSP_TEST_PYTHON=sys.executable)
    # Packaging bundles the server: this checkout's wheel and its dependencies, installed by this Python.
    run([npm, "run", "package"], folder, PYTHON=sys.executable, TORCH_LSP_REPOSITORY=str(REPO_ROOT))
    packages = sorted(folder.glob("*.vsix"))
    assert len(packages) == 1, f"`npm run package` should make one .vsix, made {[p.name for p in packages]}"
    return Build(folder, shutil.which("node") or "node", test_output, packages[0])


def user_environment() -> dict[str, str]:
    """The environment of a user who never installed torch-lsp: no PYTHONPATH, no torch-lsp on PATH."""
    env = {key: value for key, value in os.environ.items() if key not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if not (Path(p) / "torch-lsp").exists())
    assert shutil.which("torch-lsp", path=env["PATH"]) is None
    return env

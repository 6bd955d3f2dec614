"""Running a real editor headless for a test: finding it, isolating it, bounding it.

An editor that is not installed skips its test, saying how to get it, and fails it when
TORCH_LSP_REQUIRE_EDITORS is set: .ci/run installs every editor and sets it, so CI cannot
quietly stop testing one (a variable of our own, not `CI`, which every GitHub Actions run
sets, so that a stranger's CI skips what it did not install).  Each run gets a fresh HOME and XDG folders, so no
configuration, plugin or history from this machine takes part, and `torch-lsp` from
this Python environment first on PATH (and this checkout on PYTHONPATH), so the
documented set-ups, which run `torch-lsp serve`, start this checkout's server.  A run
that outlives its limit is killed with its whole process group (the editor and the
server it started).
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
EDITOR_LIMIT_S = 120  # above the sum of the harness's own waits, so a stuck step is still reported


REQUIRE_EDITORS = "TORCH_LSP_REQUIRE_EDITORS"


def unavailable(message: str) -> NoReturn:
    """Skip the test, saying what is missing; a failure where TORCH_LSP_REQUIRE_EDITORS is set (CI)."""
    if os.environ.get(REQUIRE_EDITORS):
        pytest.fail(f"{message} {REQUIRE_EDITORS} is set (as .ci/run sets it), so this is a failure, not a skip.")
    pytest.skip(f"{message} (Set {REQUIRE_EDITORS}=1 to make this a failure, as CI does.)")


def require(executable: str | None, what: str, how_to_install: str) -> str:
    """`executable`, or `unavailable`, saying what is missing and how to get it."""
    if executable:
        return executable
    unavailable(f"{what} is not installed, so this real-editor test cannot run. {how_to_install}")


def environment_bin() -> Path:
    """The folder of this Python environment's scripts, where `pip install -e .` put `torch-lsp`."""
    return Path(sys.executable).parent


def isolated_environment(home: Path, **extra: str) -> dict[str, str]:
    """The environment an editor runs in: a fresh home, this checkout's `torch-lsp` first on PATH."""
    torch_lsp = shutil.which("torch-lsp", path=str(environment_bin())) or shutil.which("torch-lsp")
    if torch_lsp is None:
        pytest.fail(f"`torch-lsp` is neither in {environment_bin()} nor on PATH, and the documented editor "
                    "set-ups run `torch-lsp serve`. Install this checkout: pip install -e '.[test]'.")
    for folder in ("config", "data", "state", "cache"):
        (home / folder).mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.update({
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "PATH": os.pathsep.join([str(Path(torch_lsp).parent), os.environ.get("PATH", "")]),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])),
        "TERM": "dumb",
    })
    env.update(extra)
    return env


@dataclass
class EditorRun:
    command: list[str]
    returncode: int
    stdout: str
    stderr: str
    result: dict

    def describe(self) -> str:
        return (f"command: {' '.join(self.command)}\nexit status: {self.returncode}\n"
                f"stdout:\n{self.stdout[-4000:]}\nstderr:\n{self.stderr[-4000:]}")


def run_editor(command: list[str], cwd: Path, env: dict[str, str], out: Path) -> EditorRun:
    """Runs the editor until it exits (or kills it after EDITOR_LIMIT_S) and reads the JSON
    result its harness wrote to `out`; a missing result fails the test with the editor's output."""
    process = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=EDITOR_LIMIT_S)
    except subprocess.TimeoutExpired:
        _kill_group(process.pid)
        stdout, stderr = process.communicate()
        run = EditorRun(command, process.returncode, stdout.decode(errors="replace"),
                        stderr.decode(errors="replace"), {})
        pytest.fail(f"The editor did not finish within {EDITOR_LIMIT_S} s and was killed.\n{run.describe()}")
    finally:
        _kill_group(process.pid)  # the server exits when its stdin closes; make sure nothing lingers
    run = EditorRun(command, process.returncode, stdout.decode(errors="replace"), stderr.decode(errors="replace"), {})
    if not out.exists():
        pytest.fail(f"The editor's harness wrote no result to {out}.\n{run.describe()}")
    run.result = json.loads(out.read_text(encoding="utf-8"))
    return run


def _kill_group(process_group: int) -> None:
    try:
        os.killpg(process_group, signal.SIGKILL)
    except ProcessLookupError:
        pass

"""Shared fixtures: where the repository is, and the real CLI as a subprocess."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def run_cli(*args: str, cwd: Path | str | None = None, stdin: str | bytes | None = None,
            timeout: float = 60) -> subprocess.CompletedProcess:
    """`torch-lsp ARGS...` run as `python -m torch_lsp`, output captured as text."""
    data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
    completed = subprocess.run(
        [sys.executable, "-m", "torch_lsp", *args],
        cwd=cwd or REPO,
        input=data if data is not None else b"",
        capture_output=True,
        timeout=timeout,
    )
    completed.stdout = completed.stdout.decode("utf-8")
    completed.stderr = completed.stderr.decode("utf-8")
    return completed


@pytest.fixture
def cli():
    """Runs the CLI: `cli("check", "x.py", cwd=tmp_path)`."""
    return run_cli


@pytest.fixture(scope="session")
def built_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel of this checkout, built as `pip wheel .` builds it (isolated, setuptools from the index)."""
    out = tmp_path_factory.mktemp("wheel")
    completed = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(out), str(REPO)],
        capture_output=True, text=True, timeout=600,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    wheels = list(out.glob("torch_lsp-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(autouse=True)
def _default_import_resolver_restored():
    """A server created in process (some tests drive one) sets the shape pass's default
    import resolver to its workspace, for every later analysis of the process: a later test
    would resolve imports it means to leave unresolved (and give up the order it runs in)."""
    from torch_lsp import shapes

    resolver = shapes._default_resolver
    yield
    shapes.set_default_resolver(resolver)

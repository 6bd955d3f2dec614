"""TorchFix itself (from PyPI) run over our TL7xx fixtures: every TOR finding has a TL finding
on the same line.

TorchFix pins an older libcst than ours, so it lives in its own virtualenv: the one named by
`TORCHFIX_PYTHON` (an interpreter with `torchfix` installed), else one this test creates once
under the user's cache folder with `pip install torchfix==0.7.0`.  When neither is possible
(no network, no `venv` module) the test is skipped and says why.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import venv
from pathlib import Path

import pytest

TORCHFIX_VERSION = "0.7.0"
FIXTURES = Path(__file__).parent / "fixtures"
OUR_FIXTURES = sorted(FIXTURES.glob("TL7*.py"))
TOR_LINE = re.compile(r"^(?P<path>[^\s:][^:]*):(?P<line>\d+):\d+: (?P<code>TOR\d+)", re.M)
# TorchFix reports these, torch-lsp stays silent on purpose (precision first; the fixtures mark
# them `# clean`): calls that pass `**kwargs`, which may carry `weights_only`/`use_reentrant`, the
# old import in the `except ImportError:` fallback for an older PyTorch, the `torch.load` in an
# `except TypeError:` fallback for a torch without `weights_only` (or in a branch for old versions),
# a load given a `pickle_module` (every PyTorch then unpickles: the caller's choice), and the load
# of a buffer the same function `torch.save`d into (a broadcast of the program's own objects, or a
# module cloned through a `with io.BytesIO() as buffer:`), and a removed API
# tried in a `try` whose `except` catches the error and falls back (a shim for every version).
SILENT_ON_PURPOSE = {("TL703.py", "TOR003", 24), ("TL705.py", "TOR102", 25), ("TL704.py", "TOR103", 79),
                     ("TL705.py", "TOR102", 42), ("TL705.py", "TOR102", 57), ("TL705.py", "TOR102", 67),
                     ("TL705.py", "TOR102", 17), ("TL705.py", "TOR102", 220), ("TL705.py", "TOR102", 259),
                     ("TL701.py", "TOR004", 58), ("TL701.py", "TOR001", 76)}


def _cache_folder() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "torch-lsp-tests" / f"torchfix-{TORCHFIX_VERSION}"


def torchfix_python() -> str:
    given = os.environ.get("TORCHFIX_PYTHON")
    if given:
        return given
    folder = _cache_folder()
    python = folder / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    if python.exists() and subprocess.run([str(python), "-c", "import torchfix"], capture_output=True).returncode == 0:
        return str(python)
    try:
        venv.EnvBuilder(with_pip=True, clear=True).create(folder)
    except Exception as error:  # noqa: BLE001 - any failure means: cannot make the environment here
        pytest.skip(f"cannot create a virtualenv for TorchFix in {folder}: {error}")
    install = subprocess.run([str(python), "-m", "pip", "install", "-q", f"torchfix=={TORCHFIX_VERSION}"],
                             capture_output=True, text=True, timeout=600)
    if install.returncode != 0:
        pytest.skip(f"cannot install torchfix=={TORCHFIX_VERSION} from PyPI into {folder}: "
                    f"{install.stderr.strip().splitlines()[-1:] or install.returncode}")
    return str(python)


def test_every_torchfix_finding_on_our_fixtures_has_a_tl_finding():
    python = torchfix_python()
    run = subprocess.run([python, "-m", "torchfix", "--select", "ALL", *map(str, OUR_FIXTURES)],
                         capture_output=True, text=True, timeout=600)
    reported = [(Path(m["path"]).name, m["code"], int(m["line"])) for m in TOR_LINE.finditer(run.stdout + run.stderr)
                if not m["code"].startswith("TOR9")]
    assert len(reported) > 20, run.stdout + run.stderr  # TorchFix ran and found what it knows
    ours = subprocess.run([sys.executable, "-m", "torch_lsp", "check", "--format", "json", *map(str, OUR_FIXTURES)],
                          capture_output=True, text=True, timeout=300)
    lines = {(Path(f["path"]).name, f["line"]) for f in json.loads(ours.stdout) if f["code"].startswith("TL")}
    missing = [r for r in reported if (r[0], r[2]) not in lines and r not in SILENT_ON_PURPOSE]
    assert missing == []
    assert SILENT_ON_PURPOSE <= set(reported), "TorchFix no longer reports these: drop them from the list"

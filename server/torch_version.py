"""Which PyTorch a file is checked against: `target-version`, else the one installed in the
project's environment, else the newest.

Rules whose advice depends on the version (an API removed in 2.0, `weights_only` that
defaults to True from 2.6) read `Analysis.torch_version`.  Finding the installed version
must be cheap and must never import torch (about 1.2 s): the version is read from the name
of the `torch-<version>.dist-info` folder in the environment's site-packages.  The
environments looked at are the probe's interpreter when the editor names one, and a
`.venv`/`venv`/`env` folder in the file's folder or one above it (up to the project root);
anything else (a conda environment, the interpreter torch-lsp itself runs in) is not the
project's for sure, so the newest version is assumed, which gives the quietest advice.
"""
from __future__ import annotations

import glob
import os
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torch_lsp.settings import Settings

TorchVersion = tuple[int, int]
_VERSION = re.compile(r"^\s*v?(\d+)\.(\d+)")
_VENV_FOLDERS = (".venv", "venv", "env")
_INSTALLED: dict[str, TorchVersion | None] = {}


def parse_version(text: str) -> TorchVersion | None:
    """(major, minor) of "2.4", "2.5.1+cu121", None when it is not a version."""
    match = _VERSION.match(text)
    return (int(match.group(1)), int(match.group(2))) if match else None


def format_version(version: TorchVersion) -> str:
    return f"{version[0]}.{version[1]}"


def target_version(settings: "Settings", path: str | None) -> TorchVersion | None:
    """The version to check `path` against; None means the newest."""
    if settings.torch_version:
        return parse_version(settings.torch_version)
    if settings.probe.python:
        found = environment_version(os.path.dirname(os.path.dirname(os.path.abspath(settings.probe.python))))
        if found is not None:
            return found
    if path and not path.startswith("<"):
        return _venv_near(os.path.dirname(os.path.abspath(path)), settings.root)
    return None


def _venv_near(folder: str, root: str | None) -> TorchVersion | None:
    stop = os.path.abspath(root) if root else None
    while True:
        for name in _VENV_FOLDERS:
            candidate = os.path.join(folder, name)
            if os.path.isfile(os.path.join(candidate, "pyvenv.cfg")):
                return environment_version(candidate)
        parent = os.path.dirname(folder)
        if parent == folder or folder == stop:
            return None
        folder = parent


def environment_version(prefix: str) -> TorchVersion | None:
    """The torch version installed in the environment at `prefix` (cached), or None."""
    if prefix not in _INSTALLED:
        patterns = (os.path.join(prefix, "lib", "python*", "site-packages", "torch-*.dist-info"),
                    os.path.join(prefix, "Lib", "site-packages", "torch-*.dist-info"))
        found = None
        for pattern in patterns:
            for folder in glob.glob(pattern):
                found = parse_version(os.path.basename(folder)[len("torch-"):])
                if found:
                    break
            if found:
                break
        _INSTALLED[prefix] = found
    return _INSTALLED[prefix]

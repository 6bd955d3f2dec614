"""Shared helpers of the shape tests: torch is a test dependency, not a server one."""
from __future__ import annotations

import os
import warnings

import pytest


def require_torch():
    """The torch module; skips the test when torch is missing locally, fails it in CI."""
    warnings.filterwarnings("ignore", message="Failed to initialize NumPy")  # torch without numpy: harmless
    try:
        import torch
    except ImportError:
        message = ("torch is not installed; install the CPU build with `.venv/bin/pip install torch==2.13.0 "
                   "--index-url https://download.pytorch.org/whl/cpu` (as the README does) to run the runtime-truth checks")
        if os.environ.get("CI"):
            pytest.fail(message + " (CI is set, so a missing torch is an error).")
        pytest.skip(message)
    return torch


@pytest.fixture
def torch_module():
    return require_torch()

"""The shared corpus (../shared/corpus): every TL1xx–TL4xx marker found, no false positive."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.shared_files import SHARED, needs_shared

REPO = Path(__file__).resolve().parents[2]
SCORER = SHARED / "tools" / "score_rules.py"
CORPUS = [SHARED / "corpus" / "rules", SHARED / "corpus" / "clean"]

pytestmark = needs_shared("tools", "score_rules.py")


def _score(codes: str) -> dict[str, float]:
    cmd = f"{sys.executable} -m torch_lsp check --format json"
    out = subprocess.run(
        [sys.executable, str(SCORER), "--codes", codes, "--cmd", cmd, *map(str, CORPUS)],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, out.stderr
    summary = out.stdout.strip().splitlines()[-1]
    values = dict(re.findall(r"(\w+)=([\d.]+)", summary))
    return {k: float(v) for k, v in values.items()} | {"_text": summary}


def test_training_loop_rules_on_corpus():
    score = _score("TL1,TL2,TL3,TL4")
    assert score["precision"] == 1.0, score["_text"]
    assert score["recall"] == 1.0, score["_text"]


def test_no_false_positive_on_whole_corpus():
    score = _score("")
    assert score["fp"] == 0, score["_text"]

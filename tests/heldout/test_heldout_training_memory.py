"""Held-out-style marked files for TL1xx (training loop), TL2xx (silent correctness) and TL3xx (memory),
plus clean scripts, scored like ../shared/tools/score_rules.py: a finding is matched to a marker by
(file, line, code); an `# expect:` code with no finding is a miss, any other finding is a false finding.

The files were written after the rules, in the corpus's style but on other domains and idioms (trainer
classes, notebook cells, Lightning/HF/accelerate loops, aliases), to catch rules fitted to the corpus.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.rules.markers import read_markers

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
FOLDERS = ("training", "correctness", "memory", "clean")


def _files() -> list[Path]:
    return sorted(p for folder in FOLDERS for p in (HERE / folder).glob("*.py"))


def _findings(files: list[Path]) -> set[tuple[Path, int, str]]:
    out = subprocess.run(
        [sys.executable, "-m", "torch_lsp", "check", "--format", "json", "--select", "TL", *map(str, files)],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )
    assert out.returncode in (0, 1), out.stderr
    return {(Path(f["path"]).resolve(), f["line"], f["code"]) for f in json.loads(out.stdout)}


def test_heldout_files_cover_every_rule_of_the_families():
    files = _files()
    marked = {p.name.split("_")[0] for p in files if p.parent.name != "clean"}
    expected = {f"TL{n}" for n in (*range(101, 109), *range(201, 207), 301, 302)}
    assert marked == expected
    assert any(p.parent.name == "clean" for p in files)


def test_heldout_recall_and_precision_are_perfect():
    files = _files()
    expected: set[tuple[Path, int, str]] = set()
    for path in files:
        expects, _ = read_markers(path)
        expected |= {(path, line, code) for line, codes in expects.items() for code in codes}
    found = _findings(files)
    missed = sorted(expected - found)
    false = sorted(found - expected)

    def show(items):
        return "\n".join(f"{p.relative_to(HERE)}:{line}: {code}" for p, line, code in items)

    assert not missed and not false, f"missed:\n{show(missed)}\nfalse findings:\n{show(false)}"

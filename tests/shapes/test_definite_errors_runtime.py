"""TL501 and TL503 fire only on contradictions that really fail at run time: every `case_*`
function of the rules' golden fixtures runs with torch; a case with an `expect` line must raise
on that line, a case with only `clean` lines must run without error."""
from __future__ import annotations

import ast
import importlib.util
import traceback
from pathlib import Path

import pytest

from tests.rules.markers import read_markers
from tests.shapes.conftest import require_torch

TESTS = Path(__file__).resolve().parents[1]
# The rule fixtures and the held-out files (tests/heldout/shapes, shapes_c, shapes_f, shapes_h, shapes_j) keep the same contract.
FIXTURES = ([TESTS / "rules" / "fixtures" / f"{code}.py" for code in ("TL501", "TL503")]
            + sorted(p for family in ("shapes", "shapes_c", "shapes_f", "shapes_h", "shapes_j") for p in (TESTS / "heldout" / family).glob("*.py")))


def cases(fixture: Path) -> list[tuple[str, set[int], set[int]]]:
    """(function name, expect lines, clean lines) of every `case_*` function."""
    expects, cleans = read_markers(fixture)
    found = []
    tree = ast.parse(fixture.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("case_"):
            lines = range(node.lineno, node.end_lineno + 1)
            called = _lines_of_classes_it_uses(tree, node)
            found.append((node.name, {l for l in expects if l in lines or l in called},
                          {l for l in cleans if l in lines or l in called}))
    return found


def _lines_of_classes_it_uses(tree: ast.Module, function: ast.FunctionDef) -> set[int]:
    """Lines of the classes the case names, and of the classes those name (a U-Net's blocks)."""
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    used: set[str] = set()
    pending = [function]
    while pending:
        for name in {n.id for n in ast.walk(pending.pop()) if isinstance(n, ast.Name)}:
            if name in classes and name not in used:
                used.add(name)
                pending.append(classes[name])
    lines: set[int] = set()
    for name in used:
        lines.update(range(classes[name].lineno, classes[name].end_lineno + 1))
    return lines


def load_fixture(fixture: Path):
    spec = importlib.util.spec_from_file_location(f"{fixture.stem.lower()}_fixture", fixture)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ALL_CASES = [(fixture, *case) for fixture in FIXTURES for case in cases(fixture)]


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.stem)
def test_every_marker_belongs_to_a_case(fixture):
    expects, cleans = read_markers(fixture)
    covered = set()
    for _, expect_lines, clean_lines in cases(fixture):
        covered |= expect_lines | clean_lines
    assert set(expects) | cleans <= covered


@pytest.mark.parametrize("fixture, name, expect_lines, clean_lines", ALL_CASES,
                         ids=[f"{c[0].stem}-{c[1]}" for c in ALL_CASES])
def test_case_raises_exactly_where_reported(fixture, name, expect_lines, clean_lines):
    torch = require_torch()
    function = getattr(load_fixture(fixture), name)
    # what the static pass cannot know: a batch of features, a size (`given["size"]`)
    args = [{"features": torch.randn(3, 16), "size": 8}] * (function.__code__.co_argcount)
    if not expect_lines:
        function(*args)  # a near miss must run
        return
    # (`nn.MultiheadAttention` checks its input width with an `assert`)
    with pytest.raises((RuntimeError, IndexError, ValueError, AssertionError)) as raised:
        function(*args)
    frames = traceback.extract_tb(raised.value.__traceback__)
    lines = {f.lineno for f in frames if Path(f.filename).resolve() == fixture}
    assert lines & expect_lines, f"{name} raised {raised.value!r} away from its marked line {sorted(expect_lines)}"

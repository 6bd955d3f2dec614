"""Runtime truth: the static shapes of realistic model files against the shapes the code
really has when it runs on CPU with torch (see `truth.py` for how both are scored).

Two views of each file in tests/shapes/models/ (among them batches from a `DataLoader`,
ResNet-style builders, and forwards called with two batch sizes):
- as written, with its `__main__` block: the call sites there propagate concrete shapes,
  and sizes that differ between call sites are named (`B`, `in_channels`);
- without that block (what a model file imported elsewhere looks like): symbolic shapes.
A symbol is right when it stands for one size per call of the function that shows it.
The bars, as written: at least 95% of the tensor names bound at run time get a full shape,
at least 97% of the shapes shown are full and right, and none is wrong.  Without call
sites: what is shown is right.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest

from torch_lsp.analysis import analyze
from torch_lsp.shapes import infer_shapes
from torch_lsp.shapes.listing import shape_records
from tests.shapes.conftest import require_torch
from tests.shapes.truth import RuntimeShapes, Score, record_runtime_shapes, score, without_main_block

MODELS = sorted((Path(__file__).parent / "models").glob("*.py"))
COVERAGE_BAR = 0.95
EXACT_BAR = 0.97
PRECISION_BAR = 0.95


@lru_cache(maxsize=None)
def runtime_of(path: Path) -> RuntimeShapes:
    return record_runtime_shapes(path)


def static_of(path: Path, with_main: bool) -> list[dict]:
    source = path.read_text(encoding="utf-8")
    analysis = analyze(source if with_main else without_main_block(source), str(path))
    return shape_records(analysis, infer_shapes(analysis))


def total(with_main: bool, per_file: bool) -> Score:
    result = Score()
    for path in MODELS:
        result.add(score(static_of(path, with_main), runtime_of(path), per_file, path.stem))
    return result


def report(name: str, result: Score) -> str:
    return (f"{name}: coverage {result.coverage:.1%} ({result.full}/{result.runtime_tensors}), exact "
            f"{result.exactness:.1%} ({result.exact}/{result.shown}), precision {result.precision:.1%} "
            f"({result.right}/{result.shown}), wrong {len(result.wrong)}\n" + "\n".join(result.wrong))


@pytest.fixture(scope="module", autouse=True)
def _torch():
    require_torch()


def test_every_model_runs_and_binds_tensors():
    for path in MODELS:
        assert len(runtime_of(path).tensor_keys()) >= 15, path.name


def test_with_call_sites_coverage_exactness_and_no_wrong_shape():
    result = total(with_main=True, per_file=False)
    print(report("with call sites, symbols consistent per call", result))
    assert result.coverage >= COVERAGE_BAR, report("coverage", result)
    assert result.exactness >= EXACT_BAR, report("exact", result)
    assert not result.wrong, report("wrong", result)


def test_without_call_sites_precision():
    """With no call site, shapes stay symbolic or partial: few are complete (the batch size
    is nobody's to know), but what is shown must be right.  A symbol is checked per call of
    the function that shows it: `in_channels` of a block used three times is three sizes."""
    result = total(with_main=False, per_file=False)
    print(report("without call sites, symbols consistent per call", result))
    assert result.precision >= PRECISION_BAR, report("precision", result)
    assert result.shown >= 0.5 * result.runtime_tensors, report("shown", result)

"""The files some tests read from `../shared`, the project's specification and rule corpus,
which sit beside the repository on the machines the project is developed on and are not
part of a clone.

On a clone alone those tests skip, saying why. CI sets TORCH_LSP_REQUIRE_SHARED=1
(.ci/run): there a missing `../shared` is a failure, so the corpus checks cannot quietly
stop running.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
REQUIRE_SHARED = "TORCH_LSP_REQUIRE_SHARED"


def missing_shared_reason(path: Path) -> str:
    return (f"this test reads {path}, from the project's shared specification and corpus, which lives "
            f"beside the repository ({SHARED}) and is not part of a clone; without it the test is skipped "
            f"(set {REQUIRE_SHARED}=1 to make that a failure, as CI does)")


def shared_file(*parts: str) -> Path:
    """The path `../shared/PARTS`; skips the calling test (fails it under TORCH_LSP_REQUIRE_SHARED) when absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        if os.environ.get(REQUIRE_SHARED):
            pytest.fail(missing_shared_reason(path) + f"; {REQUIRE_SHARED} is set, so this is a failure")
        pytest.skip(missing_shared_reason(path))
    return path


def needs_shared(*parts: str) -> pytest.MarkDecorator:
    """Marks tests that need `../shared/PARTS`: skipped without it, unless TORCH_LSP_REQUIRE_SHARED is set
    (then they run and fail on the missing file)."""
    path = SHARED.joinpath(*parts)
    return pytest.mark.skipif(not path.exists() and not os.environ.get(REQUIRE_SHARED),
                              reason=missing_shared_reason(path))

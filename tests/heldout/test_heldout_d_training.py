"""Held-out-style marked files of the fourth batch for the training-loop and memory rules
(TL101-TL108, TL301, TL302), in idioms the earlier batches cover thinly: GAN loops with two
optimizers (`optimizerD`/`optG`), gradient accumulation with `if (i + 1) % k == 0`, LBFGS
closures, actor-critic updates, Lightning `training_step`/`validation_step`, accelerate and
Fabric loops, AMP GradScaler, DDP, k-fold and early-stopping loops, trainer classes with
`self.model`, notebook cells, EMA copies and teacher/student distillation; plus clean scripts
of the same kinds. Scored as test_heldout_b_families scores its files: by (file, line, code),
recall and precision both 1.0."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.heldout.test_heldout_b_families import assert_scores_perfectly
from tests.rules.markers import read_markers

HERE = Path(__file__).parent
MARKED = ("training_d", "memory_d")
CLEAN = ("clean_d",)
FILES = sorted(p for family in MARKED + CLEAN for p in (HERE / family).glob("*.py"))
RULES = {f"TL{n}" for n in (*range(101, 109), 301, 302)}
# Right markers the checker misses today, each with why. Kept visible rather than dropped,
# and checked to be still missed, so the fix that finds one must remove it from here.
KNOWN_MISSES: dict[tuple[str, int, str], str] = {}


def test_there_are_files_in_every_family():
    for family in MARKED + CLEAN:
        assert list((HERE / family).glob("*.py")), family


def test_every_rule_of_the_families_is_probed():
    probed = {code for p in FILES if p.parent.name in MARKED for codes in read_markers(p)[0].values() for code in codes}
    assert probed == RULES


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_file_scores_perfectly(path: Path):
    assert_scores_perfectly(path, CLEAN, KNOWN_MISSES)

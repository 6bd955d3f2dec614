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

from tests.heldout.batches import batch_tests

HERE = Path(__file__).parent
MARKED = ("training_d", "memory_d")
CLEAN = ("clean_d",)
RULES = {f"TL{n}" for n in (*range(101, 109), 301, 302)}
# Right markers the checker misses today, each with why. Kept visible rather than dropped,
# and checked to be still missed, so the fix that finds one must remove it from here.
KNOWN_MISSES: dict[tuple[str, int, str], str] = {}


test_there_are_files_in_every_family, test_every_rule_of_the_families_is_probed, test_file_scores_perfectly = \
    batch_tests(HERE, MARKED, CLEAN, RULES, KNOWN_MISSES)

"""Held-out-style marked files of the seventh batch for the correctness (TL2xx), performance
(TL4xx, but TL409, off by default), torch.compile (TL601) and API (TL7xx) rules, in settings the
earlier batches cover thinly: seq2seq teacher forcing and beam scoring, PPO/RLHF with reference
and reward models, CTC speech and ViT patchifiers, LoRA adapters and EMA resumption, graph nets
and tabular k-fold, DDPM loops on accelerate, CLIP galleries, MAML task loops, bucketing
collate pipelines, legacy DataParallel ports, GradScaler accumulation, NaN hunts in notebooks,
compiled message passing and bound-method/`Module.compile` serving, physics code on removed
linalg, checkpoint conversion and torchvision 0.12-era fine-tuning; plus clean scripts of the
same kinds. Scored as test_heldout_b_families scores its files: by (file, line, code), recall
and precision both 1.0."""
from __future__ import annotations

from pathlib import Path

from tests.heldout.batches import batch_tests

HERE = Path(__file__).parent
MARKED = ("correctness_g", "performance_g", "compile_g", "api_g")
CLEAN = ("clean_g",)
RULES = {f"TL{n}" for n in (*range(201, 207), *range(401, 409), 601, *range(701, 709))}
# Right markers the checker misses today, each with why. Kept visible rather than dropped,
# and checked to be still missed, so the fix that finds one must remove it from here.
KNOWN_MISSES: dict[tuple[str, int, str], str] = {}


test_there_are_files_in_every_family, test_every_rule_of_the_families_is_probed, test_file_scores_perfectly = \
    batch_tests(HERE, MARKED, CLEAN, RULES, KNOWN_MISSES)

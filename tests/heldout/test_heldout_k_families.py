"""Held-out-style marked files of the eleventh batch for the correctness (TL2xx), performance
(TL4xx, but TL409, off by default), torch.compile (TL601) and API (TL7xx) rules, in settings the
earlier batches cover thinly: knowledge distillation (KL between temperature-softened teacher and
student distributions), label smoothing, focal and dice + CE losses written by hand, attention
written by hand (causal masks, scaled scores, heads merged by hand), pointer networks, beam search
and sampling with temperature, multi-label sigmoid heads, contrastive InfoNCE, checkpoint loading
and resuming with several `torch.load` forms and `map_location`, legacy code of the `Variable`
era (`torch.solve`, `torch.svd`, `torch.qr`, `torch.norm`, `torch.cuda.amp`), torchvision model
builders, compiled training steps and compiled modules with data-dependent control flow,
DataLoaders built in factories and from config dicts, per-sample loops in metric code, model
moves inside the epoch loops of GAN and teacher/student code, and notebook-style top-level cells;
plus clean scripts of the same kinds. Scored as test_heldout_b_families scores its files: by
(file, line, code), recall and precision both 1.0."""
from __future__ import annotations

from pathlib import Path

from tests.heldout.batches import batch_tests

HERE = Path(__file__).parent
MARKED = ("correctness_k", "performance_k", "compile_k", "api_k")
CLEAN = ("clean_k",)
RULES = {f"TL{n}" for n in (*range(201, 207), *range(401, 409), 601, *range(701, 709))}
# Right markers the checker misses today, each with why. Kept visible rather than dropped,
# and checked to be still missed, so the fix that finds one must remove it from here.
KNOWN_MISSES: dict[tuple[str, int, str], str] = {
}


test_there_are_files_in_every_family, test_every_rule_of_the_families_is_probed, test_file_scores_perfectly = \
    batch_tests(HERE, MARKED, CLEAN, RULES, KNOWN_MISSES)

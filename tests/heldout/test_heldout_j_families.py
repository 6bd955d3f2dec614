"""Held-out-style marked files of the tenth batch for the training-loop rules (TL101-TL108), the
memory rules (TL301, TL302) and the shape rules on by default (TL501, TL503), in settings the
earlier batches cover thinly: contrastive (CLIP) training with two encoders, seq2seq with teacher
forcing and beam search at evaluation, full-batch GNN training with masks, MAML-style inner loops
and functional updates, curriculum and multi-task loops with several losses and loaders, GPU data
augmentation, test-time augmentation and ensembling, gradient checkpointing, hand-written LoRA,
image captioning with a frozen encoder, VAE and normalizing-flow losses, temperature calibration,
notebook-style top-level cells; for shapes, ViT patch embeddings and unpatchify, U-Net skip
concatenations, grouped-query attention head counts, 1-D conv stacks over audio, embedding bags and
pooling over sequences, and dtype traps of seq2seq, graph and beam-search code. Scored as
test_heldout_b_families scores its files: by (file, line, code), recall and precision both 1.0;
the shape files' `case_*` functions also run with torch
(tests/shapes/test_definite_errors_runtime.py)."""
from __future__ import annotations

from pathlib import Path

from tests.heldout.batches import batch_tests

HERE = Path(__file__).parent
MARKED = ("training_j", "memory_j", "shapes_j")
CLEAN = ("clean_j",)
RULES = {f"TL{n}" for n in (*range(101, 109), 301, 302, 501, 503)}
# Right markers the checker misses today, each with why. Kept visible rather than dropped,
# and checked to be still missed, so the fix that finds one must remove it from here.
KNOWN_MISSES: dict[tuple[str, int, str], str] = {
    ("training_j/TL103_tta_ensemble_beam.py", 28, "TL103"):
        "`member(images)` for `member in members` under `inference_mode`: `members` is a parameter, `member` is no "
        "model word and nothing in the function (`.eval()`, `.parameters()`) shows that the list holds modules, so the "
        "comprehension's call is not known to run a model",
    ("training_j/TL103_tta_ensemble_beam.py", 106, "TL103"):
        "a notebook's top-level validation loop under `torch.no_grad()` after a training cell: evaluation candidates "
        "skip a scope that computes gradients, and the module scope does (its training cell); the same loop in a "
        "module that does not train is flagged",
    ("memory_j/TL302_gnn_captioning_notebook.py", 43, "TL302"):
        "one call of `decoder` after `decoder.eval()` in `score_captions`, no loop and no evaluation word in the name: "
        "the rule counts a one-off call after `eval()` in a helper as possibly part of a differentiable forward (a loss "
        "its caller backpropagates with the model in eval mode), so only a pass over data, or a function named for "
        "evaluation, is surely evaluation",
}


test_there_are_files_in_every_family, test_every_rule_of_the_families_is_probed, test_file_scores_perfectly = \
    batch_tests(HERE, MARKED, CLEAN, RULES, KNOWN_MISSES)

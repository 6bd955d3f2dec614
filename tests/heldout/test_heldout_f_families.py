"""Held-out-style marked files of the sixth batch for the training-loop rules (TL101-TL108), the
memory rules (TL301, TL302) and the shape rules on by default (TL501, TL503), in settings the
earlier batches cover thinly: MAML and Reptile meta-learning (functional fast weights, in-place
meta updates, few-shot fine-tuning under no_grad), peft LoRA fine-tuning and hand-written LoRA merges,
diffusion loops with EMA copies and noise schedulers, RLHF/PPO with reference and reward models,
CLIP-style contrastive training and retrieval, CTC speech under FSDP/AMP, seq2seq teacher forcing
with inline validation, graph nets (scatter aggregation, notebook GCN), tabular k-fold; for shapes,
grouped-query attention and rotary tables, conv stacks with sizes computed in `__init__`,
`EmbeddingBag` pooling, hand-written einops folds and float index traps. Scored as
test_heldout_b_families scores its files: by (file, line, code), recall and precision both 1.0;
the shape files' `case_*` functions also run with torch (tests/shapes/test_definite_errors_runtime.py)."""
from __future__ import annotations

from pathlib import Path

from tests.heldout.batches import batch_tests

HERE = Path(__file__).parent
MARKED = ("training_f", "memory_f", "shapes_f")
CLEAN = ("clean_f",)
RULES = {f"TL{n}" for n in (*range(101, 109), 301, 302, 501, 503)}
# Right markers the checker misses today, each with why. Kept visible rather than dropped,
# and checked to be still missed, so the fix that finds one must remove it from here.
KNOWN_MISSES: dict[tuple[str, int, str], str] = {
    ("memory_f/TL301_contrastive_ppo.py", 28, "TL301"):
        "`image_enc`/`text_enc` are not known as models (no `.eval()`/`.parameters()` use in the function, and "
        "`enc` also names tokenizer encodings, so it is no model word), so `logits` is not known to carry the graph",
    ("memory_f/TL302_retrieval_inline_val.py", 17, "TL302"):
        "a one-off model call after `.eval()` outside a loop, in a function not named for evaluation: TL302 stays "
        "silent there because such a helper may be part of a differentiable forward; here only `.topk(...).indices` "
        "of it is returned",
    ("training_f/TL102_TL103_kfold_callbacks.py", 72, "TL103"):
        "a model bound by a `for` over a list of models (an ensemble's `fold_model`) is not known as a model: names "
        "bound in a function are models only by what builds them, and loop targets often name layers",
}


test_there_are_files_in_every_family, test_every_rule_of_the_families_is_probed, test_file_scores_perfectly = \
    batch_tests(HERE, MARKED, CLEAN, RULES, KNOWN_MISSES)

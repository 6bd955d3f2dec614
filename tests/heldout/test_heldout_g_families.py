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
KNOWN_MISSES: dict[tuple[str, int, str], str] = {
    ("correctness_g/TL202_ppo_and_prioritized_replay.py", 18, "TL202"):
        "the head's input is `h = h.flatten(1)` (rank 2, batch first), but the shape pass does not carry that through "
        "`self.fc` (a `Linear` of unknown `in_features`) to the `nn.Softmax(dim=0)` applied to its output",
    ("correctness_g/TL202_ppo_and_prioritized_replay.py", 39, "TL202"):
        "`B, T, V = ref_logits.shape` refines a parameter's shape, but not a name already bound to a value the shape "
        "pass knows nothing of (`ref_model(...).logits`): refining UNKNOWN by name is a change to the shared shape pass",
    ("correctness_g/TL205_graph_and_tabular_batches.py", 45, "TL205"):
        "`preds = logits.argmax(dim=1)` of an unannotated parameter: the `dim=` keyword is not taken as proof of a "
        "torch tensor (xarray's `argmax(dim=...)` takes one too), so `preds` is not known to be a tensor",
    ("performance_g/tl402_rlhf_offload_and_folds.py", 20, "TL402"):
        "`ref_policy` is a parameter that is called and moved but never `.eval()`-ed, `.parameters()`-read or named "
        "`model`: the rule does not take a `.to(device)` of a called name as proof of a module (a function-valued "
        "`policy` in RL code is common)",
}


test_there_are_files_in_every_family, test_every_rule_of_the_families_is_probed, test_file_scores_perfectly = \
    batch_tests(HERE, MARKED, CLEAN, RULES, KNOWN_MISSES)

"""Held-out-style marked files of the eighth batch for the training-loop rules (TL101-TL108), the
memory rules (TL301, TL302) and the shape rules on by default (TL501, TL503), in settings the
earlier batches cover thinly: gradient accumulation under DDP's `no_sync`, LBFGS closures,
two-optimizer GANs, Lightning-style manual optimization, k-fold loops with early stopping, inline
validation inside train loops, SWA and EMA copies, distillation teachers, RL rollouts (DQN, A2C,
PPO, REINFORCE), notebook-style top-level scripts; for shapes, conv/pool arithmetic written by hand,
attention with symbolic sizes, broadcasting and matmul chains, and reshape-heavy models where einops
would be used. Scored as test_heldout_b_families scores its files: by (file, line, code), recall
and precision both 1.0; the shape files' `case_*` functions also run with torch
(tests/shapes/test_definite_errors_runtime.py)."""
from __future__ import annotations

from pathlib import Path

from tests.heldout.batches import batch_tests

HERE = Path(__file__).parent
MARKED = ("training_h", "memory_h", "shapes_h")
CLEAN = ("clean_h",)
RULES = {f"TL{n}" for n in (*range(101, 109), 301, 302, 501, 503)}
# Right markers the checker misses today, each with why. Kept visible rather than dropped,
# and checked to be still missed, so the fix that finds one must remove it from here.
KNOWN_MISSES: dict[tuple[str, int, str], str] = {
    ("training_h/TL101_accum_closures_gans.py", 39, "TL101"):
        "the loop's only `.backward()` sits in the LBFGS closure, a nested def passed to `optimizer.step(closure)`: "
        "the catalogue's training loop counts calls 'not inside a nested def', so the closure's missing `zero_grad` "
        "is not seen (the closure would have to be read as part of the loop that steps with it)",
    ("training_h/TL101_accum_closures_gans.py", 59, "TL101"):
        "`opt_d.zero_grad()` clears the discriminator only, while `opt_g.step()` applies generator gradients that "
        "accumulate: the rule asks whether anything in the loop clears gradients, not whether each stepped "
        "optimizer's parameters are cleared (proving two optimizers hold disjoint parameters is not done today)",
    ("training_h/TL103_distill_teachers_and_rollouts.py", 15, "TL103"):
        "a teacher run under `with torch.no_grad():` inside the student's training loop: the catalogue's evaluation "
        "context is a function or loop that never calls `.backward()`, and this loop does, so the frozen teacher "
        "left in train mode (dropout on, BN statistics updating) falls outside TL103 as defined",
    ("training_h/TL103_distill_teachers_and_rollouts.py", 43, "TL103"):
        "`policy` is a parameter called under `@torch.inference_mode()` but never `.eval()`-ed or `.parameters()`-read "
        "in the function, and `policy` is no model word (a function-valued policy is common in RL code)",
    ("training_h/TL104_swa_ema_manual_updates.py", 56, "TL104"):
        "`head.logit_scale` of an unannotated parameter `head`: that the attribute is the `nn.Parameter` of "
        "`ContrastiveHead.__init__` would need the argument's class, which nothing here proves",
    ("memory_h/TL301_accum_gan_rl.py", 72, "TL301"):
        "`optimizer.step(closure)` returns the closure's loss, graph and all (LBFGS, also SGD/Adam given a closure): "
        "the roles do not carry a graph through an optimizer's `step` return value",
    ("memory_h/TL302_notebook_eval_cells.py", 26, "TL302"):
        "a one-off top-level forward after `model.eval()` in a notebook whose module scope also trains: the "
        "catalogue's evaluation context is a function or loop that never calls `.backward()`, and the module does "
        "(its training cells); the loop cell after it is flagged, the single statement is not",
    ("memory_h/TL302_TL301_swa_ema_rollouts.py", 45, "TL301"):
        "`value = critic(obs_t)` of a parameter `critic` that is neither `.eval()`-ed nor `.parameters()`-read in the "
        "function, and `critic` (like `actor`, `policy`) is no model word, so `value` is not known to carry the graph",
}


test_there_are_files_in_every_family, test_every_rule_of_the_families_is_probed, test_file_scores_perfectly = \
    batch_tests(HERE, MARKED, CLEAN, RULES, KNOWN_MISSES)

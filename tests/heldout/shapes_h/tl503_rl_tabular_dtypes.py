"""TL503 probe: dtype traps in RL and tabular code: random actions drawn as
`(torch.rand(...) * n).trunc()` (whole numbers, but float) used to `gather` Q-values, k-fold labels
built with `torch.full(..., 0.0)` for cross entropy, a categorical column cast with `.float()` then
fed to an embedding, and integer state counts `@` a float transition matrix, and float positions from `linspace` used as
indices; against `randint` exploration mixed with `torch.where`, `torch.full(..., 0, dtype=torch.long)`, `.long()` after normalising, and `.float()` before
the product.
Each `case_*` function runs with torch (tests/shapes/test_definite_errors_runtime.py)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def case_float_exploration_actions():
    q = torch.randn(32, 4)
    actions = (torch.rand(32, 1) * 4).trunc()
    return q.gather(1, actions)  # expect: TL503


def case_randint_exploration_actions():
    q = torch.randn(32, 4)
    greedy = q.argmax(1, keepdim=True)
    explore = torch.rand(32, 1) < 0.1
    actions = torch.where(explore, torch.randint(0, 4, (32, 1)), greedy)
    return q.gather(1, actions)  # clean


def case_fold_labels_float_full():
    logits = torch.randn(100, 3)
    labels = torch.full((100,), 0.0)
    return F.cross_entropy(logits, labels)  # expect: TL503


def case_fold_labels_long_full():
    logits = torch.randn(100, 3)
    labels = torch.full((100,), 0, dtype=torch.long)
    return F.cross_entropy(logits, labels)  # clean


def case_categorical_cast_to_float():
    emb = nn.Embedding(50, 8)
    column = torch.randint(0, 50, (256,)).float()
    return emb(column)  # expect: TL503


def case_categorical_normalised_then_long():
    emb = nn.Embedding(50, 8)
    column = torch.randint(0, 50, (256,)).float()
    return emb((column / 2).long())  # clean


def case_counts_times_transition():
    counts = torch.randint(0, 10, (16, 6))
    transition = torch.softmax(torch.randn(6, 6), dim=-1)
    return counts @ transition  # expect: TL503


def case_counts_float_times_transition():
    counts = torch.randint(0, 10, (16, 6))
    transition = torch.softmax(torch.randn(6, 6), dim=-1)
    return counts.float() @ transition  # clean


def case_index_with_float_positions():
    table = torch.randn(10, 4)
    pos = torch.linspace(0, 9, 5)
    return table[pos]  # expect: TL503

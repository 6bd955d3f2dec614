"""TL503 probe: dtype traps in RL and NLP code: next-token targets shifted with float arithmetic
(`(ids + 1.0) % vocab`) for cross entropy, action indices sampled with `torch.rand(...) * n_actions`
used to `gather` Q-values, a float bucket id into an embedding, and integer count features multiplied by a
float weight matrix with `mm`; against `.long()` after the float arithmetic, `torch.randint` actions,
`torch.bucketize` ids, and counts converted with `.float()` first.
Each `case_*` function runs with torch (tests/shapes/test_definite_errors_runtime.py)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def case_shifted_targets_float():
    ids = torch.randint(0, 1000, (4, 32))
    logits = torch.randn(4 * 32, 1000)
    targets = (ids + 1.0) % 1000
    return F.cross_entropy(logits, targets.flatten())  # expect: TL503


def case_shifted_targets_long():
    ids = torch.randint(0, 1000, (4, 32))
    logits = torch.randn(4 * 32, 1000)
    targets = ((ids + 1.0) % 1000).long()
    return F.cross_entropy(logits, targets.flatten())  # clean


def case_random_actions_gather():
    q_values = torch.randn(32, 6)
    actions = (torch.rand(32, 1) * 6).floor()
    return q_values.gather(1, actions)  # expect: TL503


def case_randint_actions_gather():
    q_values = torch.randn(32, 6)
    actions = torch.randint(0, 6, (32, 1))
    return q_values.gather(1, actions)  # clean


def case_float_bucket_embedding():
    age_emb = nn.Embedding(10, 4)
    ages = torch.rand(16) * 90
    return age_emb(ages // 10)  # expect: TL503


def case_bucketized_embedding():
    age_emb = nn.Embedding(10, 4)
    ages = torch.rand(16) * 90
    buckets = torch.bucketize(ages, torch.arange(10, 100, 10))
    return age_emb(buckets)  # clean


def case_count_features_mm():
    counts = torch.randint(0, 50, (16, 300))
    weight = torch.randn(300, 32)
    return torch.mm(counts, weight)  # expect: TL503


def case_count_features_float_mm():
    counts = torch.randint(0, 50, (16, 300))
    weight = torch.randn(300, 32)
    return torch.mm(counts.float(), weight)  # clean

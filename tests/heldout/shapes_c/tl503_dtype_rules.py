"""TL503 probe: dtypes that make a loss, an embedding or a product raise: `nll_loss` targets
built with `torch.randn(...).abs()`, a float adjacency matrix `bmm` with an integer node-index
tensor, and item ids computed by a float division into an `nn.Embedding`; against BCE with float
targets, `cross_entropy` targets cast with `.long()`, floor division on integer ids, and
`one_hot(...).float()` mixed into a matmul.
Each `case_*` function runs with torch (tests/shapes/test_definite_errors_runtime.py)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def case_nll_with_float_targets():
    log_probs = F.log_softmax(torch.randn(16, 7), dim=-1)
    targets = (torch.randn(16).abs() * 3).clamp(max=6)
    return F.nll_loss(log_probs, targets)  # expect: TL503


def case_nll_with_long_targets():
    log_probs = F.log_softmax(torch.randn(16, 7), dim=-1)
    targets = (torch.rand(16) * 7).long()
    return F.nll_loss(log_probs, targets)  # clean


def case_bce_float_targets():
    criterion = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([2.0]))
    logits = torch.randn(32, 1)
    targets = torch.randint(0, 2, (32, 1)).float()
    return criterion(logits, targets)  # clean


def case_adjacency_times_index():
    adj = torch.rand(4, 10, 10)
    node_ids = torch.arange(10).repeat(4, 1).unsqueeze(-1)
    return torch.bmm(adj, node_ids)  # expect: TL503


def case_adjacency_times_one_hot():
    adj = torch.rand(4, 10, 10)
    labels = torch.randint(0, 3, (4, 10))
    onehot = F.one_hot(labels, num_classes=3).float()
    return torch.bmm(adj, onehot)  # clean


def case_bucketed_ids_by_true_division():
    buckets = nn.Embedding(100, 16)
    raw_ids = torch.randint(0, 1000, (8, 5))
    return buckets(raw_ids / 10)  # expect: TL503


def case_bucketed_ids_by_floor_division():
    buckets = nn.Embedding(100, 16)
    raw_ids = torch.randint(0, 1000, (8, 5))
    return buckets(raw_ids // 10)  # clean

"""TL503 probe: class-index targets that are floating point (`torch.rand(...) * C`, a `.float()`
cast before `nn.CrossEntropyLoss`) and float token ids into an embedding; against `randint`
targets, soft-label probability targets of the input's shape (accepted as floats) and a
`.long()` cast. Each `case_*` function runs with torch (tests/shapes/test_definite_errors_runtime.py)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def case_random_float_targets():
    logits = torch.randn(32, 10)
    targets = torch.rand(32) * 10
    return F.cross_entropy(logits, targets)  # expect: TL503


def case_float_cast_before_criterion():
    criterion = nn.CrossEntropyLoss()
    logits = torch.randn(8, 5)
    labels = torch.randint(0, 5, (8,)).float()
    return criterion(logits, labels)  # expect: TL503


def case_soft_labels():
    logits = torch.randn(8, 5)
    soft = torch.softmax(torch.randn(8, 5), dim=-1)
    return F.cross_entropy(logits, soft)  # clean


def case_float_token_ids():
    embed = nn.Embedding(1000, 64)
    ids = torch.rand(4, 16) * 1000
    return embed(ids)  # expect: TL503


def case_token_ids_cast():
    embed = nn.Embedding(1000, 64)
    ids = (torch.rand(4, 16) * 1000).long()
    return embed(ids)  # clean

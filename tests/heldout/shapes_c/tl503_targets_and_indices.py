"""TL503 probe: class targets and indices of a floating dtype in training-style code: labels
built with `torch.tensor(..., dtype=torch.float32)` for `nn.CrossEntropyLoss`, a float index
tensor used to pick rows (`table[idx]`), and `gather` with a float index from `argmax(...) * 1.0`;
against targets whose float dtype is legal (smoothed one-hot probabilities of the logits' shape,
`BCEWithLogitsLoss` and `mse_loss` targets), `.float()` of labels of unknown shape (they may be
soft labels), an `int32` index, and a boolean mask.
Each `case_*` function runs with torch (tests/shapes/test_definite_errors_runtime.py)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def case_float_labels_from_list():
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    labels = torch.tensor([0, 2, 1, 1, 0, 2], dtype=torch.float32)
    logits = torch.randn(6, 3, requires_grad=True)
    return criterion(logits, labels)  # expect: TL503


def case_smoothed_one_hot_targets():
    n_classes = 3
    labels = torch.tensor([0, 2, 1, 1, 0, 2])
    soft = F.one_hot(labels, n_classes).float() * 0.9 + 0.1 / n_classes
    logits = torch.randn(6, n_classes)
    return F.cross_entropy(logits, soft)  # clean


def case_regression_and_binary_targets():
    preds = torch.randn(16, 1)
    flags = torch.randint(0, 2, (16, 1))
    bce = nn.BCEWithLogitsLoss()(preds, flags.float())  # clean
    return bce + F.mse_loss(preds.squeeze(1), torch.arange(16).float())  # clean


def case_labels_of_unknown_shape(given):
    targets = given["features"][:, :5].softmax(dim=-1)
    logits = torch.randn(3, 5)
    return F.cross_entropy(logits, targets.float())  # clean


def case_float_row_index():
    table = torch.randn(100, 16)
    idx = torch.rand(8) * 100
    return table[idx]  # expect: TL503


def case_int32_and_mask_index():
    table = torch.randn(100, 16)
    idx = torch.randint(0, 100, (8,), dtype=torch.int32)
    keep = table.norm(dim=1) > 4.0
    return table[idx], table[keep]  # clean


def case_gather_with_scaled_argmax():
    probs = torch.rand(4, 10).softmax(dim=-1)
    best = probs.argmax(dim=-1, keepdim=True) * 1.0
    return probs.gather(1, best)  # expect: TL503


def case_gather_with_argmax():
    probs = torch.rand(4, 10).softmax(dim=-1)
    best = probs.argmax(dim=-1, keepdim=True)
    return probs.gather(1, best)  # clean

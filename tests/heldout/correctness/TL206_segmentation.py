"""TL206 probe: segmentation losses built with `from torch.nn.functional import ...`, a softmax applied
through a variable reassigned in place, and a `BCEWithLogitsLoss` fed `.sigmoid()`; near misses use the
activation only for Dice or metrics."""
import torch
from torch import nn
from torch.nn.functional import cross_entropy, softmax

bce = nn.BCEWithLogitsLoss()


def dice(probs, target_onehot, eps=1.0):
    inter = (probs * target_onehot).sum(dim=(2, 3))
    return 1 - ((2 * inter + eps) / (probs.sum(dim=(2, 3)) + target_onehot.sum(dim=(2, 3)) + eps)).mean()


def seg_loss(logits, mask, n_classes):
    probs = softmax(logits, dim=1)
    onehot = nn.functional.one_hot(mask, n_classes).permute(0, 3, 1, 2).float()
    return cross_entropy(logits, mask) + dice(probs, onehot)  # clean


def seg_loss_broken(logits, mask):
    logits = softmax(logits, dim=1)
    return cross_entropy(logits, mask)  # expect: TL206


def boundary_loss(edge_logits, edge_target):
    return bce(edge_logits.sigmoid(), edge_target)  # expect: TL206


def boundary_metrics(edge_logits, edge_target, threshold=0.5):
    pred = edge_logits.sigmoid() > threshold
    return (pred == edge_target.bool()).float().mean(), bce(edge_logits, edge_target)  # clean

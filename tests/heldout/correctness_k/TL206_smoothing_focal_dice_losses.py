"""TL206 probe: losses written by hand. A label-smoothing wrapper passes `F.softmax(logits, dim=-1)`
probabilities to `F.cross_entropy(..., label_smoothing=...)` (CE takes their log-softmax again: the
loss is squashed and its gradients vanish), a sigmoid focal loss computes
`p = torch.sigmoid(logits)` and hands `p` to `binary_cross_entropy_with_logits`, a segmentation
loss computes `probs = logits.softmax(1)` for the dice term and then feeds the same `probs` to the
CE term, and a multi-label head's `torch.sigmoid` output goes to an `nn.BCEWithLogitsLoss`; near
misses are the same losses done right: label smoothing by hand with `log_softmax` and
`nll_loss`/a weighted sum, focal loss with `p` only in the modulating factor, dice on the
probabilities with CE on the logits, `F.binary_cross_entropy` on sigmoid outputs, and a
distillation KL between log-softmax student and softmax teacher."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def smoothed_ce_legacy(logits, target, eps=0.1):
    probs = F.softmax(logits, dim=-1)
    return F.cross_entropy(probs, target, label_smoothing=eps)  # expect: TL206


def smoothed_ce_by_hand(logits, target, eps=0.1):
    log_probs = F.log_softmax(logits, dim=-1)
    nll = F.nll_loss(log_probs, target)  # clean
    smooth = -log_probs.mean(dim=-1).mean()
    return (1 - eps) * nll + eps * smooth


def sigmoid_focal_loss_wrong(logits, targets, alpha=0.25, gamma=2.0):
    p = torch.sigmoid(logits)
    ce = F.binary_cross_entropy_with_logits(p, targets, reduction="none")  # expect: TL206
    p_t = p * targets + (1 - p) * (1 - targets)
    loss = ce * (1 - p_t) ** gamma
    alpha_t = alpha * targets + (1 - alpha) * (1 - targets)
    return (alpha_t * loss).mean()


def sigmoid_focal_loss(logits, targets, alpha=0.25, gamma=2.0):
    p = torch.sigmoid(logits)
    ce = F.binary_cross_entropy_with_logits(logits, targets, reduction="none")  # clean
    p_t = p * targets + (1 - p) * (1 - targets)
    alpha_t = alpha * targets + (1 - alpha) * (1 - targets)
    return (alpha_t * ce * (1 - p_t) ** gamma).mean()


def dice_ce_wrong(logits, mask, smooth=1.0):
    probs = logits.softmax(1)
    onehot = F.one_hot(mask, logits.shape[1]).permute(0, 3, 1, 2).float()
    inter = (probs * onehot).sum((2, 3))
    dice = 1 - (2 * inter + smooth) / (probs.sum((2, 3)) + onehot.sum((2, 3)) + smooth)
    return dice.mean() + F.cross_entropy(probs, mask)  # expect: TL206


def dice_ce(logits, mask, smooth=1.0):
    probs = logits.softmax(1)
    onehot = F.one_hot(mask, logits.shape[1]).permute(0, 3, 1, 2).float()
    inter = (probs * onehot).sum((2, 3))
    dice = 1 - (2 * inter + smooth) / (probs.sum((2, 3)) + onehot.sum((2, 3)) + smooth)
    return dice.mean() + F.cross_entropy(logits, mask)  # clean


class MultiLabelHead(nn.Module):
    def __init__(self, dim, n_labels):
        super().__init__()
        self.fc = nn.Linear(dim, n_labels)
        self.criterion = nn.BCEWithLogitsLoss()
        self.bce = nn.BCELoss()

    def loss_wrong(self, feats, labels):
        scores = torch.sigmoid(self.fc(feats))
        return self.criterion(scores, labels)  # expect: TL206

    def loss(self, feats, labels):
        scores = torch.sigmoid(self.fc(feats))
        return self.bce(scores, labels) + F.binary_cross_entropy(scores, labels)  # clean


def distill_kl(student_logits, teacher_logits, T=2.0):
    log_p_s = F.log_softmax(student_logits / T, dim=-1)
    p_t = F.softmax(teacher_logits / T, dim=-1)
    return F.kl_div(log_p_s, p_t, reduction="batchmean") * T ** 2  # clean

"""TL206 probe: a tabular classifier that normalises its logits with `F.softmax` before
`F.cross_entropy`, a click-through-rate model feeding `torch.sigmoid(logits)` to an
`nn.BCEWithLogitsLoss` instance, a segmentation loss given `F.log_softmax` output, and a tabular
MLP whose `nn.Sequential` head ends in `nn.Softmax` and whose output goes to a
`CrossEntropyLoss`; near misses are `F.nll_loss` of a log-softmax, `F.binary_cross_entropy` of a
sigmoid, a cross-entropy whose soft *target* is a softmax of teacher logits, and focal loss
computing its probabilities beside the raw-logit cross-entropy."""
import torch
import torch.nn as nn
import torch.nn.functional as F

ctr_criterion = nn.BCEWithLogitsLoss()


class TabularMLP(nn.Module):
    def __init__(self, n_features, n_classes, hidden=128):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(n_features, hidden), nn.ReLU(), nn.Dropout(0.1),
            nn.Linear(hidden, n_classes), nn.Softmax(dim=-1),
        )

    def forward(self, x):
        return self.net(x)


def tabular_step(model, x, y, optimizer):
    model.train()
    logits = model(x)
    probs = F.softmax(logits, dim=1)
    loss = F.cross_entropy(probs, y)  # expect: TL206
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    return loss.detach()


def fit_mlp(x, y, n_classes, epochs=20):
    model = TabularMLP(x.size(1), n_classes)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    model.train()
    for _ in range(epochs):
        loss = criterion(model(x), y)  # expect: TL206
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return model


def ctr_loss(model, dense, sparse, clicks):
    logits = model(dense, sparse).squeeze(-1)
    loss = ctr_criterion(torch.sigmoid(logits), clicks.float())  # expect: TL206
    calib = F.binary_cross_entropy(torch.sigmoid(logits), clicks.float())  # clean
    return loss, calib


def seg_loss(seg_logits, masks):
    ce = F.cross_entropy(F.log_softmax(seg_logits, dim=1), masks, ignore_index=255)  # expect: TL206
    nll = F.nll_loss(F.log_softmax(seg_logits, dim=1), masks, ignore_index=255)  # clean
    return ce, nll


def distill_ce(student_logits, teacher_logits, T=2.0):
    soft_targets = F.softmax(teacher_logits / T, dim=-1)
    return F.cross_entropy(student_logits / T, soft_targets)  # clean


def focal_loss(logits, target, gamma=2.0):
    ce = F.cross_entropy(logits, target, reduction="none")  # clean
    p_t = torch.softmax(logits, dim=-1).gather(1, target[:, None]).squeeze(1)
    return ((1 - p_t) ** gamma * ce).mean()

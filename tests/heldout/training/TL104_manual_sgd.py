"""TL104 probe: a hand-written SGD step over model parameters, a learnable logit scale clamped in forward,
and near misses that go through `.data`, `torch.no_grad()`, or tensors that do not require grad."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ContrastiveHead(nn.Module):
    def __init__(self, dim=256):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.logit_scale = nn.Parameter(torch.tensor(2.659))

    def forward(self, a, b):
        self.logit_scale.data.clamp_(0, 4.6052)  # clean
        a = F.normalize(self.proj(a), dim=-1)
        b = F.normalize(self.proj(b), dim=-1)
        return self.logit_scale.exp() * a @ b.T


class ContrastiveHeadBroken(ContrastiveHead):
    def forward(self, a, b):
        self.logit_scale.clamp_(0, 4.6052)  # expect: TL104
        return super().forward(a, b)


def sgd_step(model: nn.Module, lr=0.01):
    for p in model.parameters():
        if p.grad is not None:
            p -= lr * p.grad  # expect: TL104


def sgd_step_fixed(model: nn.Module, lr=0.01):
    with torch.no_grad():
        for p in model.parameters():
            if p.grad is not None:
                p -= lr * p.grad  # clean


def sgd_step_data(model: nn.Module, lr=0.01):
    for p in model.parameters():
        if p.grad is not None:
            p.data.add_(p.grad, alpha=-lr)  # clean


def fit_linear(x, y, steps=100, lr=0.1):
    w = torch.zeros(x.size(1), requires_grad=True)
    for _ in range(steps):
        loss = F.mse_loss(x @ w, y)
        loss.backward()
        w.sub_(lr * w.grad)  # expect: TL104
        w.grad = None
    return w.detach()


def running_stats(batches):
    total = torch.zeros(3)
    for b in batches:
        total += b.mean(dim=(0, 2, 3))  # clean
    return total / len(batches)

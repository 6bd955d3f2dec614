"""TL202 probe: softmax over dim 0 of a `q @ k.transpose(-2, -1)` score matrix, of a `torch.stack(..., dim=1)`
result and of `reshape(B, -1)` (dim given positionally); near misses normalise 1-D mixing weights or a
tensor whose rank is unknown."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiScaleFusion(nn.Module):
    def __init__(self, dim=256, n_scales=3):
        super().__init__()
        self.score = nn.Linear(dim, 1)
        self.scale_logits = nn.Parameter(torch.zeros(n_scales))

    def forward(self, feats):
        # feats: list of [B, D] tensors, one per scale
        scores = torch.stack([self.score(f).squeeze(-1) for f in feats], dim=1)  # [B, S]
        weights = F.softmax(scores, dim=0)  # expect: TL202
        prior = F.softmax(self.scale_logits, dim=0)  # clean
        stacked = torch.stack(feats, dim=1)
        return (stacked * (weights * prior)[..., None]).sum(dim=1)


def attention(q, k, v):
    scores = q @ k.transpose(1, 2) / q.size(-1) ** 0.5
    return torch.softmax(scores, dim=0) @ v  # expect: TL202


def sequence_confidence(logits, batch_size):
    probs = torch.softmax(logits.reshape(batch_size, -1), 0)  # expect: TL202
    return probs.amax(dim=-1)


def loss_weights(task_losses):
    return torch.softmax(torch.tensor(task_losses), dim=0)  # clean


def normalise(scores):
    return F.softmax(scores, dim=0)  # clean

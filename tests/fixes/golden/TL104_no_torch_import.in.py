"""A head whose temperature is clamped on every forward pass."""
from __future__ import annotations

from torch import nn
from torch.nn import functional as F


class CosineHead(nn.Module):
    def __init__(self, dim, n_classes):
        super().__init__()
        self.weight = nn.Parameter(F.normalize(nn.init.normal_(nn.Parameter(nn.Linear(dim, n_classes).weight)), dim=-1))
        self.temperature = nn.Parameter(F.relu(self.weight.new_ones(())) * 0.1)

    def forward(self, x):
        self.temperature.clamp_(min=0.01)
        return F.normalize(x, dim=-1) @ self.weight.T / self.temperature

"""TL501 probe: sizes that are symbols in the model file (constructor arguments that no call
fixes): a fusion head that concatenates two `dim`-wide encodings into a `Linear(dim, ...)` (2*dim
never equals dim), and a gated residual whose gate is `dim // 2` wide; against the same heads
sized `2 * dim`, widths that are separate arguments (`hidden` may equal `2 * dim`: nothing is
proven), `x.view(B, T, n_head, -1)` on symbolic sizes, and `expand` to a symbolic batch.
Each `case_*` function runs with torch (tests/shapes/test_definite_errors_runtime.py)."""
import torch
import torch.nn as nn


class PairFusion(nn.Module):
    def __init__(self, in_dim, dim, n_out):
        super().__init__()
        self.enc = nn.Linear(in_dim, dim)
        self.head = nn.Linear(dim, n_out)

    def forward(self, a, b):
        h = torch.cat([self.enc(a), self.enc(b)], dim=-1)
        return self.head(h)  # expect: TL501


class PairFusionFixed(nn.Module):
    def __init__(self, in_dim, dim, n_out):
        super().__init__()
        self.enc = nn.Linear(in_dim, dim)
        self.head = nn.Linear(2 * dim, n_out)

    def forward(self, a, b):
        return self.head(torch.cat([self.enc(a), self.enc(b)], dim=-1))  # clean


class PairFusionSeparateWidth(nn.Module):
    def __init__(self, in_dim, dim, hidden, n_out):
        super().__init__()
        self.enc = nn.Linear(in_dim, dim)
        self.head = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, n_out))

    def forward(self, a, b):
        return self.head(torch.cat([self.enc(a), self.enc(b)], dim=-1))  # clean


class GatedResidual(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.value = nn.Linear(dim, dim)
        self.gate = nn.Linear(dim, dim // 2)

    def forward(self, x):
        return x + self.value(x) * torch.sigmoid(self.gate(x))  # expect: TL501


class HeadSplit(nn.Module):
    def __init__(self, dim, n_head):
        super().__init__()
        self.n_head = n_head
        self.qkv = nn.Linear(dim, 3 * dim)
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.n_head, -1).unbind(2)  # clean
        cls = self.cls.expand(B, -1, -1)  # clean
        return torch.cat([cls, (q * k + v).reshape(B, T, C)], dim=1)  # clean


def case_pair_fusion():
    return PairFusion(16, 32, 4)(torch.randn(5, 16), torch.randn(5, 16))


def case_pair_fusion_fixed():
    return PairFusionFixed(16, 32, 4)(torch.randn(5, 16), torch.randn(5, 16))


def case_pair_fusion_separate_width():
    return PairFusionSeparateWidth(16, 32, 64, 4)(torch.randn(5, 16), torch.randn(5, 16))


def case_gated_residual():
    return GatedResidual(64)(torch.randn(3, 64))


def case_head_split():
    return HeadSplit(48, 4)(torch.randn(2, 7, 48))

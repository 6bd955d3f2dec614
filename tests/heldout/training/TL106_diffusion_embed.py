"""TL106 probe: sinusoidal timestep embedding and noise augmentation inside `forward` of diffusion modules;
near misses take the device from the input, or are factories in plain helpers and `__init__`."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class TimestepEmbedding(nn.Module):
    def __init__(self, dim=128):
        super().__init__()
        self.dim = dim
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.SiLU(), nn.Linear(4 * dim, 4 * dim))

    def forward(self, t):
        half = self.dim // 2
        freqs = torch.exp(-math.log(10000) * torch.arange(half, dtype=torch.float32) / half)  # expect: TL106
        args = t.float()[:, None] * freqs[None]
        return self.mlp(torch.cat([args.sin(), args.cos()], dim=-1))


class NoisyConditioner(nn.Module):
    def __init__(self, cond_dim=512, drop_prob=0.1):
        super().__init__()
        self.proj = nn.Linear(cond_dim, cond_dim)
        self.drop_prob = drop_prob
        self.null = nn.Parameter(torch.zeros(cond_dim))  # clean

    def forward(self, cond):
        keep = torch.rand(cond.size(0)) > self.drop_prob  # expect: TL106
        cond = torch.where(keep[:, None], cond, self.null)
        jitter = torch.randn(cond.shape, device=cond.device, dtype=cond.dtype) * 0.01  # clean
        return F.silu(self.proj(cond + jitter))


def timestep_schedule(n_steps=1000):
    return torch.linspace(1e-4, 0.02, n_steps)  # clean

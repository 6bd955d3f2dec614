"""TL202 probe: a mixture-of-experts router and an ensemble averager with `dim=0` on 2-D/3-D tensors built
by `torch.randn`, `einsum` and `torch.cat(..., dim=1)`; near misses are the ensemble-axis softmax over a
per-model weight vector and `dim=-1` routing."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Router(nn.Module):
    def __init__(self, dim=512, n_experts=8):
        super().__init__()
        self.gate = nn.Parameter(torch.randn(dim, n_experts) * dim ** -0.5)
        self.ensemble_logits = nn.Parameter(torch.zeros(n_experts))

    def forward(self, tokens):
        # tokens: [B, T, D]
        logits = torch.einsum("btd,de->bte", tokens, self.gate)
        probs = logits.softmax(dim=0)  # expect: TL202
        routed = logits.softmax(dim=-1)  # clean
        mix = self.ensemble_logits.softmax(dim=0)  # clean
        return probs, routed, mix


def noisy_routing_probs(batch, n_experts, temperature=1.0):
    noise = torch.randn(batch, n_experts)
    return F.softmax(noise / temperature, dim=0)  # expect: TL202


def ensemble_average(member_logits):
    stacked = torch.cat([m.unsqueeze(0) for m in member_logits], dim=0)  # [M, B, C]
    return F.softmax(stacked, dim=-1).mean(dim=0)  # clean

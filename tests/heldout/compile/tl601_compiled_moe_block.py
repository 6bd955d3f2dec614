"""TL601 probe: the forward of a mixture-of-experts block passed to `torch.compile` in this file:
a Python `if` on `tokens.any()`, `.nonzero()` routing and `int()` of a tensor count, against
branches on shapes, on `self.training` and on a Python config value."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MoEBlock(nn.Module):
    def __init__(self, dim=512, n_experts=8, top_k=2, capacity_factor=1.25):
        super().__init__()
        self.gate = nn.Linear(dim, n_experts, bias=False)
        self.experts = nn.ModuleList([nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
                                      for _ in range(n_experts)])
        self.top_k = top_k
        self.capacity_factor = capacity_factor

    def forward(self, x):
        if x.dim() == 3:  # clean
            b, t, d = x.shape
            x = x.reshape(b * t, d)
        weights, chosen = torch.topk(F.softmax(self.gate(x), dim=-1), self.top_k, dim=-1)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            hit = chosen == e
            if hit.any():  # expect: TL601
                rows = hit.any(dim=-1).nonzero().squeeze(-1)  # expect: TL601
                w = (weights * hit).sum(dim=-1, keepdim=True)[rows]
                out[rows] += w * expert(x[rows])
        if self.training and self.capacity_factor > 1.0:  # clean
            load = F.one_hot(chosen[:, 0], len(self.experts)).float().mean(0)
            self.aux_loss = (load * load).sum() * len(self.experts)
        return out


moe = torch.compile(MoEBlock(), dynamic=True)


def routed_fraction(block, x):
    chosen = torch.topk(block.gate(x), block.top_k, dim=-1).indices
    return int((chosen == 0).sum())  # clean

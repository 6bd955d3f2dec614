"""TL601 probe: modules with data-dependent control flow compiled at construction. A pointer
network's decoder stops early with `while not finished.all():` on a tensor, a mixture-of-experts
layer routes with `if mask.any():` per expert and gathers the routed tokens with `x[mask]` (a
boolean index, a data-dependent shape), and a detection head keeps `scores.nonzero()` above a
threshold; near misses are `torch.where` for the same choices, a loop over `range(self.n_experts)`
(Python ints), a branch on `self.training`, and the same code in a module that is never
compiled."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class GreedyPointerDecoder(nn.Module):
    def __init__(self, hidden, max_steps=20):
        super().__init__()
        self.cell = nn.GRUCell(hidden, hidden)
        self.attn = nn.Linear(hidden, hidden, bias=False)
        self.max_steps = max_steps

    def forward(self, enc: torch.Tensor, h: torch.Tensor, end_index: int = 0):
        finished = torch.zeros(enc.size(0), dtype=torch.bool, device=enc.device)
        picks = []
        inp = enc.mean(1)
        while not finished.all():  # expect: TL601
            h = self.cell(inp, h)
            scores = torch.bmm(self.attn(enc), h.unsqueeze(-1)).squeeze(-1)
            idx = scores.argmax(-1)
            picks.append(idx)
            finished = finished | (idx == end_index)
            inp = enc[torch.arange(enc.size(0), device=enc.device), idx]
            if len(picks) == self.max_steps:  # clean
                break
        return torch.stack(picks, 1)


class TopOneMoE(nn.Module):
    def __init__(self, dim, n_experts):
        super().__init__()
        self.router = nn.Linear(dim, n_experts)
        self.experts = nn.ModuleList(nn.Linear(dim, dim) for _ in range(n_experts))
        self.n_experts = n_experts

    def forward(self, x: torch.Tensor):
        route = self.router(x).argmax(-1)
        out = torch.zeros_like(x)
        for e in range(self.n_experts):  # clean
            mask = route == e
            if mask.any():  # expect: TL601
                out[mask] = self.experts[e](x[mask])  # expect: TL601
        if self.training:  # clean
            out = F.dropout(out, 0.1)
        return out


class DenseMoE(nn.Module):
    def __init__(self, dim, n_experts):
        super().__init__()
        self.router = nn.Linear(dim, n_experts)
        self.experts = nn.ModuleList(nn.Linear(dim, dim) for _ in range(n_experts))

    def forward(self, x: torch.Tensor):
        route = self.router(x).argmax(-1, keepdim=True)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            out = torch.where(route == e, expert(x), out)  # clean
        return out


class ThresholdHead(nn.Module):
    def __init__(self, dim, threshold=0.5):
        super().__init__()
        self.score = nn.Linear(dim, 1)
        self.threshold = threshold

    def forward(self, feats: torch.Tensor):
        scores = torch.sigmoid(self.score(feats)).squeeze(-1)
        keep = (scores > self.threshold).nonzero()  # expect: TL601
        return keep, scores


class EagerRouter(nn.Module):
    def __init__(self, dim, n_experts):
        super().__init__()
        self.router = nn.Linear(dim, n_experts)

    def forward(self, x: torch.Tensor):
        route = self.router(x).argmax(-1)
        if (route == 0).any():  # clean
            return x[route == 0]  # clean
        return x


pointer_decoder = torch.compile(GreedyPointerDecoder(128))
moe = torch.compile(TopOneMoE(256, 8))
head = torch.compile(ThresholdHead(256))
dense_moe = torch.compile(DenseMoE(256, 8))
eager_router = EagerRouter(256, 8)

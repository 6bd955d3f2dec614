"""TL106 probe: factories without `device=` inside `forward` of a rotary position embedding (the
position ids from `torch.arange(seq_len)`), a message-passing layer that sums neighbour messages into
`torch.zeros(num_nodes, dim)`, and an ALiBi attention bias built from `torch.arange`; near misses take
the device from the input, use `new_zeros`/`zeros_like`, build the inverse frequencies in `__init__`
as a buffer, and use a Python-number factory only for a shape constant outside `forward`."""
import math

import torch
from torch import nn


class RotaryEmbedding(nn.Module):
    def __init__(self, head_dim, base=10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2).float() / head_dim))  # clean
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, q, k):
        seq_len = q.shape[-2]
        t = torch.arange(seq_len, dtype=self.inv_freq.dtype)  # expect: TL106
        freqs = torch.outer(t, self.inv_freq)
        emb = torch.cat([freqs, freqs], dim=-1)
        cos, sin = emb.cos(), emb.sin()
        return self._rotate(q, cos, sin), self._rotate(k, cos, sin)

    @staticmethod
    def _rotate(x, cos, sin):
        x1, x2 = x.chunk(2, dim=-1)
        return x * cos + torch.cat([-x2, x1], dim=-1) * sin


class RotaryEmbeddingOnDevice(RotaryEmbedding):
    def forward(self, q, k):
        t = torch.arange(q.shape[-2], device=q.device, dtype=self.inv_freq.dtype)  # clean
        emb = torch.outer(t, self.inv_freq).repeat(1, 2)
        return self._rotate(q, emb.cos(), emb.sin()), self._rotate(k, emb.cos(), emb.sin())


class SumAggregation(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.msg = nn.Linear(2 * dim, dim)

    def forward(self, x, edge_index):
        src, dst = edge_index
        messages = self.msg(torch.cat([x[src], x[dst]], dim=-1))
        out = torch.zeros(x.size(0), messages.size(1))  # expect: TL106
        out.index_add_(0, dst, messages)
        deg = x.new_zeros(x.size(0)).index_add_(0, dst, torch.ones_like(dst, dtype=x.dtype))  # clean
        return out / deg.clamp(min=1).unsqueeze(-1)


class MeanAggregation(nn.Module):
    def forward(self, x, edge_index):
        src, dst = edge_index
        out = torch.zeros_like(x).index_add_(0, dst, x[src])  # clean
        deg = torch.zeros(x.size(0), device=x.device).index_add_(0, dst, torch.ones(dst.numel(), device=x.device))  # clean
        return out / deg.clamp(min=1).unsqueeze(-1)


def alibi_slopes(n_heads):
    return torch.tensor([2 ** (-8 * (i + 1) / n_heads) for i in range(n_heads)])  # clean


class ALiBiAttention(nn.Module):
    def __init__(self, dim, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.register_buffer("slopes", alibi_slopes(n_heads), persistent=False)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.n_heads, C // self.n_heads).permute(2, 0, 3, 1, 4)
        pos = torch.arange(T)  # expect: TL106
        bias = -(pos[None, :] - pos[:, None]).abs() * self.slopes[:, None, None]
        att = (q @ k.transpose(-2, -1)) / math.sqrt(C // self.n_heads) + bias
        return (att.softmax(-1) @ v).transpose(1, 2).reshape(B, T, C)

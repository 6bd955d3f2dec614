"""TL501 probe: grouped-query attention configured from a dataclass (8 query heads sharing 2 key/value
heads): the key projection viewed as if it had one head per query head, rotary tables half the head
width added to the queries, and a score product of queries against the un-repeated keys; against the same
block that views keys with `n_kv_head`, repeats them with `repeat_interleave`, and builds full-width rotary
tables with `torch.cat([freqs, freqs], -1)`.
Each `case_*` function runs with torch (tests/shapes/test_definite_errors_runtime.py)."""
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class GQAConfig:
    dim: int = 256
    n_head: int = 8
    n_kv_head: int = 2


class GQAttention(nn.Module):
    def __init__(self, cfg: GQAConfig):
        super().__init__()
        self.n_head, self.n_kv_head = cfg.n_head, cfg.n_kv_head
        self.head_dim = cfg.dim // cfg.n_head
        self.wq = nn.Linear(cfg.dim, cfg.n_head * self.head_dim, bias=False)
        self.wk = nn.Linear(cfg.dim, cfg.n_kv_head * self.head_dim, bias=False)
        self.wv = nn.Linear(cfg.dim, cfg.n_kv_head * self.head_dim, bias=False)
        self.wo = nn.Linear(cfg.n_head * self.head_dim, cfg.dim, bias=False)

    def forward(self, x):
        B, T, _ = x.shape
        q = self.wq(x).view(B, T, self.n_head, self.head_dim).transpose(1, 2)  # clean
        k = self.wk(x).view(B, T, self.n_kv_head, self.head_dim).transpose(1, 2)  # clean
        v = self.wv(x).view(B, T, self.n_kv_head, self.head_dim).transpose(1, 2)  # clean
        groups = self.n_head // self.n_kv_head
        k = k.repeat_interleave(groups, dim=1)
        v = v.repeat_interleave(groups, dim=1)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.wo(y.transpose(1, 2).reshape(B, T, -1))  # clean


class GQAttentionOneHeadPerQuery(GQAttention):
    def forward(self, x):
        B, T, _ = x.shape
        q = self.wq(x).view(B, T, self.n_head, self.head_dim).transpose(1, 2)
        k = self.wk(x).view(B, T, self.n_head, self.head_dim).transpose(1, 2)  # expect: TL501
        return q @ k.transpose(-2, -1)


def case_gqa_block():
    return GQAttention(GQAConfig())(torch.randn(2, 16, 256))


def case_gqa_keys_viewed_per_query_head():
    return GQAttentionOneHeadPerQuery(GQAConfig())(torch.randn(2, 16, 256))


def case_scores_against_unrepeated_keys():
    q = torch.randn(2, 8, 16, 32)
    k = torch.randn(2, 2, 16, 32)
    return q @ k.transpose(-2, -1)  # expect: TL501


def case_scores_against_repeated_keys():
    q = torch.randn(2, 8, 16, 32)
    k = torch.randn(2, 2, 16, 32).repeat_interleave(4, dim=1)
    return q @ k.transpose(-2, -1)  # clean


def case_rotary_half_width_tables():
    head_dim, T = 32, 16
    q = torch.randn(2, 8, T, head_dim)
    inv_freq = 1.0 / (10000 ** (torch.arange(0, head_dim, 2).float() / head_dim))
    freqs = torch.outer(torch.arange(T).float(), inv_freq)
    cos = freqs.cos()
    return q * cos  # expect: TL501


def case_rotary_full_width_tables():
    head_dim, T = 32, 16
    q = torch.randn(2, 8, T, head_dim)
    inv_freq = 1.0 / (10000 ** (torch.arange(0, head_dim, 2).float() / head_dim))
    freqs = torch.outer(torch.arange(T).float(), inv_freq)
    emb = torch.cat([freqs, freqs], dim=-1)
    return q * emb.cos() + q.flip(-1) * emb.sin()  # clean

"""TL501 probe: grouped-query attention with explicit head counts: query heads (8) scored against
key heads (2) with no `repeat_interleave`, a head split whose head size assumes 64 on a 384-wide
model with 8 heads, a key projection sized for the query heads reshaped to the key heads, and
`nn.MultiheadAttention` built with an `embed_dim` other than the features it is fed; against the
keys repeated per group, `head_dim = d_model // n_heads`, a projection of `n_kv * head_dim`, and a
`kdim`/`vdim` for the other width.
Each `case_*` function runs with torch (tests/shapes/test_definite_errors_runtime.py)."""
import torch
import torch.nn as nn


def case_gqa_without_repeat():
    B, T, n_heads, n_kv, hd = 2, 10, 8, 2, 32
    q = torch.randn(B, n_heads, T, hd)
    k = torch.randn(B, n_kv, T, hd)
    return q @ k.transpose(-2, -1)  # expect: TL501


def case_gqa_repeated():
    B, T, n_heads, n_kv, hd = 2, 10, 8, 2, 32
    q = torch.randn(B, n_heads, T, hd)
    k = torch.randn(B, n_kv, T, hd)
    k = k.repeat_interleave(n_heads // n_kv, dim=1)
    return q @ k.transpose(-2, -1)  # clean


def case_head_dim_assumed_64():
    x = torch.randn(2, 10, 384)
    q_proj = nn.Linear(384, 384)
    return q_proj(x).view(2, 10, 8, 64)  # expect: TL501


def case_head_dim_from_width():
    d_model, n_heads = 384, 8
    x = torch.randn(2, 10, d_model)
    q_proj = nn.Linear(d_model, d_model)
    return q_proj(x).view(2, 10, n_heads, d_model // n_heads)  # clean


class GQAttention(nn.Module):
    def __init__(self, d_model=256, n_heads=8, n_kv=2):
        super().__init__()
        self.n_heads, self.n_kv, self.hd = n_heads, n_kv, d_model // n_heads
        self.q = nn.Linear(d_model, d_model)
        self.kv = nn.Linear(d_model, 2 * d_model)
        self.o = nn.Linear(d_model, d_model)

    def forward(self, x):
        B, T, _ = x.shape
        q = self.q(x).view(B, T, self.n_heads, self.hd).transpose(1, 2)
        k, v = self.kv(x).view(B, T, 2, self.n_kv, self.hd).unbind(2)  # expect: TL501
        k = k.transpose(1, 2).repeat_interleave(self.n_heads // self.n_kv, dim=1)
        v = v.transpose(1, 2).repeat_interleave(self.n_heads // self.n_kv, dim=1)
        att = (q @ k.transpose(-2, -1) / self.hd ** 0.5).softmax(-1)
        return self.o((att @ v).transpose(1, 2).reshape(B, T, -1))


class GQAttentionKV(nn.Module):
    def __init__(self, d_model=256, n_heads=8, n_kv=2):
        super().__init__()
        self.n_heads, self.n_kv, self.hd = n_heads, n_kv, d_model // n_heads
        self.q = nn.Linear(d_model, d_model)
        self.kv = nn.Linear(d_model, 2 * n_kv * self.hd)
        self.o = nn.Linear(d_model, d_model)

    def forward(self, x):
        B, T, _ = x.shape
        q = self.q(x).view(B, T, self.n_heads, self.hd).transpose(1, 2)
        k, v = self.kv(x).view(B, T, 2, self.n_kv, self.hd).unbind(2)  # clean
        k = k.transpose(1, 2).repeat_interleave(self.n_heads // self.n_kv, dim=1)
        v = v.transpose(1, 2).repeat_interleave(self.n_heads // self.n_kv, dim=1)
        att = (q @ k.transpose(-2, -1) / self.hd ** 0.5).softmax(-1)
        return self.o((att @ v).transpose(1, 2).reshape(B, T, -1))


def case_kv_projection_sized_for_query_heads():
    return GQAttention()(torch.randn(2, 12, 256))


def case_kv_projection_sized_for_kv_heads():
    return GQAttentionKV()(torch.randn(2, 12, 256))


def case_mha_embed_dim_mismatch():
    mha = nn.MultiheadAttention(embed_dim=256, num_heads=8, batch_first=True)
    text = torch.randn(2, 20, 512)
    return mha(text, text, text)  # expect: TL501


def case_mha_cross_attention_kdim():
    mha = nn.MultiheadAttention(embed_dim=256, num_heads=8, kdim=512, vdim=512, batch_first=True)
    queries = torch.randn(2, 20, 256)
    image_feats = torch.randn(2, 49, 512)
    return mha(queries, image_feats, image_feats)  # clean

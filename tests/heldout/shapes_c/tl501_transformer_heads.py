"""TL501 probe: multi-head attention written by hand, heads split and merged with
`view`/`reshape`/`permute`/`transpose`: a merge that forgets the head count, a cross-attention
whose key projection is sized for the decoder width while it reads 512-wide encoder memory, and
grouped-query attention scoring with `einsum` against keys of another head size; against the
same blocks with `-1` in `view`, `.contiguous().view`, `einsum` with matching letters, a
broadcast padding mask and `F.scaled_dot_product_attention`. Each `case_*` function runs with
torch (tests/shapes/test_definite_errors_runtime.py)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class SelfAttention(nn.Module):
    def __init__(self, d_model=256, n_heads=8, dropout=0.0):
        super().__init__()
        assert d_model % n_heads == 0
        self.n_heads = n_heads
        self.head_dim = d_model // n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        self.drop = nn.Dropout(dropout)

    def forward(self, x, pad_mask=None):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=-1)
        q = q.view(B, T, self.n_heads, self.head_dim).transpose(1, 2)  # clean
        k = k.view(B, T, self.n_heads, -1).transpose(1, 2)  # clean
        v = v.reshape(B, T, self.n_heads, self.head_dim).permute(0, 2, 1, 3)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(self.head_dim)  # clean
        if pad_mask is not None:
            att = att.masked_fill(pad_mask[:, None, None, :], float("-inf"))  # clean
        att = self.drop(att.softmax(dim=-1))
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # clean
        return self.out(y)


class SelfAttentionBadMerge(SelfAttention):
    def forward(self, x, pad_mask=None):
        B, T, C = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (t.reshape(B, T, self.n_heads, self.head_dim).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v)
        y = y.transpose(1, 2).reshape(B, T, self.head_dim)  # expect: TL501
        return self.out(y)


class CrossAttention(nn.Module):
    def __init__(self, d_model=256, d_memory=None, n_heads=4):
        super().__init__()
        d_memory = d_memory or d_model
        self.n_heads = n_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.kv_proj = nn.Linear(d_memory, 2 * d_model)
        self.o_proj = nn.Linear(d_model, d_model)

    def forward(self, x, memory):
        B, T, D = x.shape
        S = memory.size(1)
        q = self.q_proj(x).view(B, T, self.n_heads, D // self.n_heads).transpose(1, 2)
        k, v = self.kv_proj(memory).view(B, S, 2, self.n_heads, D // self.n_heads).permute(2, 0, 3, 1, 4)  # expect: TL501
        y = F.scaled_dot_product_attention(q, k, v)
        return self.o_proj(y.transpose(1, 2).reshape(B, T, D))


def case_merge_forgets_heads():
    attn = SelfAttentionBadMerge(d_model=256, n_heads=8)
    return attn(torch.randn(2, 10, 256))


def case_self_attention_with_padding():
    attn = SelfAttention(d_model=128, n_heads=4)
    x = torch.randn(3, 7, 128)
    pad = torch.zeros(3, 7, dtype=torch.bool)
    pad[:, -2:] = True
    return attn(x, pad)


def case_cross_attention_memory_width():
    layer = CrossAttention(d_model=256, n_heads=4)
    decoder_states = torch.randn(2, 12, 256)
    encoder_memory = torch.randn(2, 30, 512)
    return layer(decoder_states, encoder_memory)


def case_grouped_query_scores():
    batch, n_heads, n_kv, seq = 2, 8, 2, 16
    q = torch.randn(batch, n_heads, seq, 64)
    k = torch.randn(batch, n_kv, seq, 32)
    k = k.repeat_interleave(n_heads // n_kv, dim=1)
    return torch.einsum("bhqd,bhkd->bhqk", q, k)  # expect: TL501


def case_grouped_query_scores_fixed():
    batch, n_heads, n_kv, seq, head_dim = 2, 8, 2, 16, 64
    q = torch.randn(batch, n_heads, seq, head_dim)
    k = torch.randn(batch, n_kv, seq, head_dim).repeat_interleave(n_heads // n_kv, dim=1)
    v = torch.randn(batch, n_kv, seq, head_dim).repeat_interleave(n_heads // n_kv, dim=1)
    scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / head_dim ** 0.5  # clean
    causal = torch.ones(seq, seq, dtype=torch.bool).tril()
    scores = scores.masked_fill(~causal, float("-inf"))  # clean
    return torch.einsum("bhqk,bhkd->bqhd", scores.softmax(-1), v).flatten(2)  # clean

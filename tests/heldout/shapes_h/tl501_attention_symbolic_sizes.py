"""TL501 probe: attention blocks whose sizes are constructor symbols: an output projection sized `3 * dim` (the fused
qkv width) fed the `dim`-wide attention output, a cross-attention whose key/value projection is sized
for the query width while the file builds it with a 768-wide context, heads merged to the wrong
width, relative
position bias added with the heads axis in the wrong place, and scores `q @ k` without transposing the
keys; against the standard `view(B, T, n_head, -1).transpose(1, 2)` split, `scaled_dot_product_attention`
with a broadcastable mask, and a bias of shape (1, heads, T, T).
Each `case_*` function runs with torch (tests/shapes/test_definite_errors_runtime.py)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class FusedSelfAttention(nn.Module):
    def __init__(self, dim, n_head):
        super().__init__()
        self.n_head = n_head
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(3 * dim, dim)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (t.view(B, T, self.n_head, -1).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.transpose(1, 2).reshape(B, T, C)
        return self.proj(y)  # expect: TL501


class FusedSelfAttentionFixed(nn.Module):
    def __init__(self, dim, n_head):
        super().__init__()
        self.n_head = n_head
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=-1)
        q, k, v = (t.view(B, T, self.n_head, -1).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))  # clean


def case_proj_sized_for_fused_qkv():
    return FusedSelfAttention(192, 6)(torch.randn(2, 16, 192))


def case_proj():
    return FusedSelfAttentionFixed(192, 6)(torch.randn(2, 16, 192))


class CrossAttention(nn.Module):
    def __init__(self, q_dim, kv_dim, n_head):
        super().__init__()
        self.n_head = n_head
        self.q = nn.Linear(q_dim, q_dim)
        self.kv = nn.Linear(q_dim, 2 * q_dim)
        self.out = nn.Linear(q_dim, q_dim)

    def forward(self, x, context):
        B, T, C = x.shape
        q = self.q(x).view(B, T, self.n_head, -1).transpose(1, 2)
        k, v = self.kv(context).chunk(2, dim=-1)  # expect: TL501
        S = context.shape[1]
        k = k.reshape(B, S, self.n_head, -1).transpose(1, 2)
        v = v.reshape(B, S, self.n_head, -1).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v)
        return self.out(y.transpose(1, 2).reshape(B, T, C))


class CrossAttentionFixed(nn.Module):
    def __init__(self, q_dim, kv_dim, n_head):
        super().__init__()
        self.n_head = n_head
        self.q = nn.Linear(q_dim, q_dim)
        self.kv = nn.Linear(kv_dim, 2 * q_dim)
        self.out = nn.Linear(q_dim, q_dim)

    def forward(self, x, context):
        B, T, C = x.shape
        q = self.q(x).view(B, T, self.n_head, -1).transpose(1, 2)
        k, v = self.kv(context).chunk(2, dim=-1)  # clean
        S = context.shape[1]
        k = k.reshape(B, S, self.n_head, -1).transpose(1, 2)
        v = v.reshape(B, S, self.n_head, -1).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v)
        return self.out(y.transpose(1, 2).reshape(B, T, C))  # clean


def case_cross_attention_kv_sized_for_queries():
    return CrossAttention(256, 768, 8)(torch.randn(2, 10, 256), torch.randn(2, 77, 768))


def case_cross_attention():
    return CrossAttentionFixed(256, 768, 8)(torch.randn(2, 10, 256), torch.randn(2, 77, 768))


def case_scores_without_transposed_keys():
    q = torch.randn(2, 8, 64, 32)
    k = torch.randn(2, 8, 64, 32)
    return (q @ k) / 32 ** 0.5  # expect: TL501


def case_scores():
    q = torch.randn(2, 8, 64, 32)
    k = torch.randn(2, 8, 64, 32)
    return (q @ k.transpose(-2, -1)) / 32 ** 0.5  # clean


def case_relative_bias_heads_last():
    scores = torch.randn(2, 8, 49, 49)
    table = nn.Parameter(torch.zeros(169, 8))
    index = torch.randint(0, 169, (49 * 49,))
    bias = table[index].view(49, 49, 8)
    return scores + bias  # expect: TL501


def case_relative_bias():
    scores = torch.randn(2, 8, 49, 49)
    table = nn.Parameter(torch.zeros(169, 8))
    index = torch.randint(0, 169, (49 * 49,))
    bias = table[index].view(49, 49, 8).permute(2, 0, 1).unsqueeze(0)
    return scores + bias  # clean


def case_padding_mask_for_sdpa():
    q = k = v = torch.randn(4, 8, 20, 16)
    keep = torch.ones(4, 20, dtype=torch.bool)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=keep[:, None, None, :])  # clean


def case_merge_heads_wrong_width():
    y = torch.randn(2, 8, 16, 32)
    proj = nn.Linear(512, 512)
    merged = y.transpose(1, 2).reshape(2, 16, 256)
    return proj(merged)  # expect: TL501

"""TL203 probe: merging attention heads with `transpose(1, 2).view(...)`, `.mT.view` and `movedim(...).view`
in a vision transformer; near misses add `.contiguous()`, use `reshape`, or run the transposed tensor
through a layer before viewing it."""
import torch
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self, dim=384, heads=6):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).view(B, N, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)  # clean
        q, k, v = qkv.unbind(0)
        attn = (q @ k.transpose(-2, -1)) * (C // self.heads) ** -0.5
        out = attn.softmax(dim=-1) @ v
        out = out.transpose(1, 2).view(B, N, C)  # expect: TL203
        return self.proj(out)


class AttentionFixed(Attention):
    def forward(self, x):
        B, N, C = x.shape
        q, k, v = self.qkv(x).reshape(B, N, 3, self.heads, -1).permute(2, 0, 3, 1, 4).unbind(0)
        out = nn.functional.scaled_dot_product_attention(q, k, v)
        out = out.transpose(1, 2).contiguous().view(B, N, C)  # clean
        return self.proj(out)


class PatchMerge(nn.Module):
    def __init__(self, dim=96):
        super().__init__()
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        # x: [B, C, H, W]
        B, C, H, W = x.shape
        tokens = self.norm(x.permute(0, 2, 3, 1))
        return tokens.view(B, H * W, C)  # clean


def channels_last_tokens(x):
    B, C, H, W = x.shape
    return x.movedim(1, -1).view(B, -1)  # expect: TL203


def gram_rows(feats):
    B, N, C = feats.shape
    return feats.mT.view(B * C, N)  # expect: TL203

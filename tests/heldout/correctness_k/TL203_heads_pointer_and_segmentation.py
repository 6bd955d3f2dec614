"""TL203 probe: attention heads merged by hand, a pointer network over a sequence-first encoder, and
per-pixel segmentation losses. The attention block merges heads with
`(att @ v).transpose(1, 2).view(B, T, C)`, the pointer network turns an LSTM's `[T, B, H]` output
batch-first with `transpose(0, 1)` and later flattens it with `.view(B * T, H)` through the local
name, and the segmentation loss flattens `[B, C, H, W]` logits with `.permute(0, 2, 3, 1).view(-1, C)`
(all three raise: the view merges dims the transpose moved); near misses are the same code with
`.contiguous()` or `.reshape`, a rotary embedding that only splits the last dim after the
transpose (`.view(B, T, nh, hs // 2, 2)`), and Swin-style `x.flatten(2).transpose(1, 2)` split
back into `H, W` (splitting a dim is legal on the transposed tensor)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.heads = heads

    def forward(self, x, causal_mask=None):
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        att = (q @ k.transpose(-2, -1)) * (C // self.heads) ** -0.5
        if causal_mask is not None:
            att = att.masked_fill(causal_mask, float("-inf"))
        att = att.softmax(dim=-1)
        y = (att @ v).transpose(1, 2).view(B, T, C)  # expect: TL203
        return self.out(y)

    def forward_fixed(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        att = ((q @ k.transpose(-2, -1)) * (C // self.heads) ** -0.5).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)  # clean
        z = (att @ v).transpose(1, 2).reshape(B, T, C)  # clean
        return self.out(y + z)


def apply_rotary(q, cos, sin):
    # q: [B, nh, T, hs]
    B, nh, T, hs = q.shape
    q2 = q.transpose(1, 2).view(B, T, nh, hs // 2, 2)  # clean
    x1, x2 = q2.unbind(-1)
    rotated = torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)
    return rotated.flatten(3).transpose(1, 2)


class PointerNet(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.emb = nn.Embedding(vocab, hidden)
        self.encoder = nn.LSTM(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)

    def forward(self, src, dec_h):
        # src: [T, B] token ids (sequence-first)
        enc_out, _ = self.encoder(self.emb(src))
        enc = enc_out.transpose(0, 1)
        B, T, H = enc.shape
        keys = self.key(enc.view(B * T, H)).view(B, T, H)  # expect: TL203
        scores = torch.bmm(keys, dec_h.unsqueeze(-1)).squeeze(-1)
        return F.log_softmax(scores, dim=-1)


def pixel_ce(logits, target, ignore_index=255):
    B, C, H, W = logits.shape
    flat = logits.permute(0, 2, 3, 1).view(-1, C)  # expect: TL203
    return F.cross_entropy(flat, target.view(-1), ignore_index=ignore_index)


def pixel_ce_fixed(logits, target, ignore_index=255):
    C = logits.shape[1]
    flat = logits.permute(0, 2, 3, 1).reshape(-1, C)  # clean
    return F.cross_entropy(flat, target.reshape(-1), ignore_index=ignore_index)


def tokens_to_map(x, H, W):
    B, C = x.shape[:2]
    tokens = x.flatten(2).transpose(1, 2)
    return tokens.view(B, H, W, C)  # clean

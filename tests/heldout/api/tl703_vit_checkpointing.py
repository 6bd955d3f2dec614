"""TL703 probe: activation checkpointing in a ViT encoder without `use_reentrant`
(`checkpoint_sequential` over the blocks and `checkpoint` with extra arguments), against an
explicit `use_reentrant=False` and the project's own `checkpoint` helper that saves weights."""
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint, checkpoint_sequential


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x, key_padding_mask=None):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, key_padding_mask=key_padding_mask, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class Encoder(nn.Module):
    def __init__(self, dim=384, depth=12, heads=6, grad_ckpt="none"):
        super().__init__()
        self.blocks = nn.Sequential(*[Block(dim, heads) for _ in range(depth)])
        self.grad_ckpt = grad_ckpt

    def forward(self, x, mask=None):
        if self.grad_ckpt == "segments" and mask is None:
            return checkpoint_sequential(self.blocks, 4, x)  # expect: TL703
        for blk in self.blocks:
            if self.grad_ckpt == "block":
                x = checkpoint(blk, x, mask)  # expect: TL703
            elif self.grad_ckpt == "block_v2":
                x = checkpoint(blk, x, mask, use_reentrant=False)  # clean
            else:
                x = blk(x, mask)
        return x

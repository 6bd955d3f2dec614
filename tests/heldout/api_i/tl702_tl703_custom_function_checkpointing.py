"""TL702 and TL703 probe: LLM fine-tuning code written by hand: freezing the embedding and the
lower blocks with the typo `.require_grad = False` (it sets a new attribute and freezes nothing:
the whole model keeps training), and activation checkpointing of the decoder blocks through
`checkpoint(...)` and `checkpoint_sequential(...)` without `use_reentrant`; near misses are the
spelled-right `requires_grad = False` and `requires_grad_(False)`, and checkpointing with
`use_reentrant` given either way."""
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint, checkpoint_sequential


class Block(nn.Module):
    def __init__(self, d, n_heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, n_heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class TinyLM(nn.Module):
    def __init__(self, vocab, d=512, n_layers=12, n_heads=8, grad_ckpt=True):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList(Block(d, n_heads) for _ in range(n_layers))
        self.head = nn.Linear(d, vocab, bias=False)
        self.grad_ckpt = grad_ckpt

    def forward(self, ids):
        x = self.emb(ids)
        for block in self.blocks:
            if self.grad_ckpt and self.training:
                x = checkpoint(block, x)  # expect: TL703
            else:
                x = block(x)
        return self.head(x)


class TinyLMSeq(TinyLM):
    def forward(self, ids):
        x = self.emb(ids)
        if self.grad_ckpt and self.training:
            x = checkpoint_sequential(nn.Sequential(*self.blocks), 4, x)  # expect: TL703
        else:
            for block in self.blocks:
                x = block(x)
        return self.head(x)


class TinyLMFixed(TinyLM):
    def forward(self, ids):
        x = self.emb(ids)
        for block in self.blocks:
            x = checkpoint(block, x, use_reentrant=False) if self.training else block(x)  # clean
        return self.head(x)


def segments(model, x):
    return checkpoint_sequential(nn.Sequential(*model.blocks), 4, x, use_reentrant=True)  # clean


def freeze_lower_legacy(model, n_frozen):
    model.emb.weight.require_grad = False  # expect: TL702
    for block in model.blocks[:n_frozen]:
        for p in block.parameters():
            p.require_grad = False  # expect: TL702


def freeze_lower(model, n_frozen):
    model.emb.weight.requires_grad = False  # clean
    for block in model.blocks[:n_frozen]:
        block.requires_grad_(False)  # clean

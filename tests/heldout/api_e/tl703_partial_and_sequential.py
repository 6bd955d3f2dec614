"""TL703 probe: activation checkpointing through `from torch.utils.checkpoint import checkpoint
as ckpt` in a Swin-style stage, `torch.utils.checkpoint.checkpoint_sequential` without
`use_reentrant`, and a `checkpoint` call whose only keyword is `preserve_rng_state`; near misses
bind `use_reentrant=False` once with `functools.partial` and call the partial, pass
`use_reentrant=True` explicitly, spread a kwargs dict, and use DeepSpeed's own
`deepspeed.checkpointing.checkpoint`."""
import functools

import deepspeed
import torch
import torch.nn as nn
import torch.utils.checkpoint
from torch.utils.checkpoint import checkpoint
from torch.utils.checkpoint import checkpoint as ckpt


class Stage(nn.Module):
    def __init__(self, blocks, use_checkpoint=True, ckpt_kwargs=None):
        super().__init__()
        self.blocks = nn.ModuleList(blocks)
        self.use_checkpoint = use_checkpoint
        self.ckpt_kwargs = ckpt_kwargs or {}
        self.safe_ckpt = functools.partial(checkpoint, use_reentrant=False)

    def forward(self, x):
        for i, blk in enumerate(self.blocks):
            if self.use_checkpoint and i % 2 == 0:
                x = ckpt(blk, x)  # expect: TL703
            elif self.use_checkpoint:
                x = self.safe_ckpt(blk, x)  # clean
            else:
                x = blk(x)
        return x


def run_trunk(trunk, x, segments=4):
    return torch.utils.checkpoint.checkpoint_sequential(trunk, segments, x)  # expect: TL703


def attention_block(attn, q, k, v):
    return checkpoint(attn, q, k, v, preserve_rng_state=False)  # expect: TL703


def legacy_block(block, x):
    return checkpoint(block, x, use_reentrant=True)  # clean


def configured_block(block, x, **kwargs):
    return checkpoint(block, x, **kwargs)  # clean


def deepspeed_block(block, x):
    return deepspeed.checkpointing.checkpoint(block, x)  # clean

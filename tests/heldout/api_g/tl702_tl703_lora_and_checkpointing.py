"""TL702 and TL703 probe: hand-written LoRA fine-tuning of a decoder-only LM with activation
checkpointing: freezing the base weights with `p.require_grad = False` in a loop, re-enabling
the adapters through an attribute chain (`block.attn.lora_a.weight.require_grad = True`), and
checkpointing each block with `checkpoint(block, h, mask)` and with the fully qualified
`torch.utils.checkpoint.checkpoint(self.head_block, h)`; near misses are `requires_grad` spelt
right, `requires_grad_(False)`, a checkpoint call with `use_reentrant=False`,
`checkpoint_sequential(..., use_reentrant=False)`, HF's `gradient_checkpointing_enable`, and the
project's own `save_checkpoint` helper."""
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint, checkpoint_sequential


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, r=8, alpha=16):
        super().__init__()
        self.base = base
        self.lora_a = nn.Linear(base.in_features, r, bias=False)
        self.lora_b = nn.Linear(r, base.out_features, bias=False)
        nn.init.zeros_(self.lora_b.weight)
        self.scale = alpha / r

    def forward(self, x):
        return self.base(x) + self.lora_b(self.lora_a(x)) * self.scale


class Decoder(nn.Module):
    def __init__(self, blocks: nn.ModuleList, head_block: nn.Module, grad_ckpt=True):
        super().__init__()
        self.blocks = blocks
        self.head_block = head_block
        self.grad_ckpt = grad_ckpt

    def forward(self, h, mask):
        for block in self.blocks:
            if self.grad_ckpt and self.training:
                h = checkpoint(block, h, mask)  # expect: TL703
            else:
                h = block(h, mask)
        h = torch.utils.checkpoint.checkpoint(self.head_block, h)  # expect: TL703
        return h

    def forward_safe(self, h, mask):
        for block in self.blocks:
            h = checkpoint(block, h, mask, use_reentrant=False)  # clean
        return checkpoint_sequential(self.head_block, 2, h, use_reentrant=False)  # clean


def prepare_lora(model: Decoder):
    for p in model.parameters():
        p.require_grad = False  # expect: TL702
    for block in model.blocks:
        block.attn.lora_a.weight.require_grad = True  # expect: TL702
        block.attn.lora_b.weight.requires_grad = True  # clean
    model.head_block.requires_grad_(False)  # clean
    return [p for p in model.parameters() if p.requires_grad]


def prepare_hf(hf_model):
    hf_model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})  # clean
    return hf_model


def save_checkpoint(model, path):
    torch.save({k: v for k, v in model.state_dict().items() if "lora_" in k}, path)


def finish(model, path):
    save_checkpoint(model, path)  # clean

"""TL702 probe: LoRA-style adapter setup that freezes the base model through `require_grad`
on every parameter and on a positional embedding, against the correct spelling and
`requires_grad_(False)` on a module."""
import torch
import torch.nn as nn


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, r=8, alpha=16):
        super().__init__()
        self.base = base
        self.A = nn.Parameter(torch.randn(r, base.in_features) * 0.01)
        self.B = nn.Parameter(torch.zeros(base.out_features, r))
        self.scale = alpha / r
        self.base.weight.require_grad = False  # expect: TL702

    def forward(self, x):
        return self.base(x) + (x @ self.A.T @ self.B.T) * self.scale


def prepare_for_lora(model, target=("q_proj", "v_proj")):
    for p in model.parameters():
        p.require_grad = False  # expect: TL702
    for name, module in model.named_children():
        if name in target and isinstance(module, nn.Linear):
            setattr(model, name, LoRALinear(module))
    model.pos_embed.requires_grad = False  # clean
    model.norm.requires_grad_(False)  # clean
    return model

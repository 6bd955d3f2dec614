"""TL104 probe: in-place edits of the parameters themselves (`p.mul_`, `p[...] = ...`) outside no_grad next
to gradient surgery on `p.grad` (not the leaf), a clone that is no longer a leaf, and a `torch.no_grad()`
projection step."""
import torch
import torch.nn as nn


def clip_and_scale_grads(model: nn.Module, scale: float):
    for p in model.parameters():
        if p.grad is not None:
            p.grad.mul_(scale)  # clean
            p.grad.clamp_(-1.0, 1.0)  # clean


def weight_decay_step(model: nn.Module, wd=1e-4):
    for p in model.parameters():
        p.mul_(1 - wd)  # expect: TL104


def max_norm_projection(model: nn.Module, max_norm=3.0):
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(max_norm / p.norm().clamp_min(max_norm))  # clean


def masked_copy(weight: nn.Parameter, mask):
    edited = weight.clone()
    edited[mask] = 0.0  # clean
    return edited


class PrunedLinear(nn.Linear):
    def prune_(self, mask):
        self.weight[mask] = 0.0  # expect: TL104

"""TL104 probe: a hand-written LoRA layer whose `merge()` adds the low-rank product into the frozen-by-
intent (but still grad-requiring) base weight outside no_grad, a diffusion EMA helper that lerps the EMA
copy's parameters (a `deepcopy`, still requiring grad) in place, and a first-order meta-learning step
(Reptile) that moves the meta-parameters in place; near misses merge under `torch.no_grad()`, run the EMA
update with `@torch.no_grad()`, write through `.data`, initialise with `nn.init.zeros_`, and scale a
non-leaf activation in place."""
import copy
import math

import torch
import torch.nn.functional as F
from torch import nn


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, r=8, alpha=16):
        super().__init__()
        self.base = base
        self.A = nn.Parameter(torch.randn(r, base.in_features) / math.sqrt(r))
        self.B = nn.Parameter(torch.zeros(base.out_features, r))
        nn.init.zeros_(self.B)  # clean
        self.scale = alpha / r

    def forward(self, x):
        h = self.base(x) + (x @ self.A.T @ self.B.T) * self.scale
        h *= 1.0  # clean
        return h

    def merge(self):
        self.base.weight += (self.B @ self.A) * self.scale  # expect: TL104

    def merge_safely(self):
        with torch.no_grad():
            self.base.weight += (self.B @ self.A) * self.scale  # clean
            self.B.zero_()  # clean


def update_ema(ema_model, model, decay=0.9999):
    for ema_p, p in zip(ema_model.parameters(), model.parameters()):
        ema_p.mul_(decay).add_(p.detach(), alpha=1 - decay)  # expect: TL104


@torch.no_grad()
def update_ema_no_grad(ema_model, model, decay=0.9999):
    for ema_p, p in zip(ema_model.parameters(), model.parameters()):
        ema_p.lerp_(p, 1 - decay)  # clean


def train_unet(unet, loader, scheduler_fn, epochs=1):
    ema_unet = copy.deepcopy(unet)
    opt = torch.optim.AdamW(unet.parameters(), lr=1e-4)
    for epoch in range(epochs):
        for x0 in loader:
            t = torch.randint(0, 1000, (x0.shape[0],), device=x0.device)
            noise = torch.randn_like(x0)
            loss = F.mse_loss(unet(scheduler_fn(x0, noise, t), t), noise)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            update_ema(ema_unet, unet)
    return ema_unet


def reptile(meta_model, sample_task, outer_steps=1000, inner_steps=5, eps=0.1):
    for _ in range(outer_steps):
        learner = copy.deepcopy(meta_model)
        inner_opt = torch.optim.SGD(learner.parameters(), lr=0.02)
        x, y = sample_task()
        for _ in range(inner_steps):
            inner_opt.zero_grad(set_to_none=True)
            F.mse_loss(learner(x), y).backward()
            inner_opt.step()
        for p_meta, p_task in zip(meta_model.parameters(), learner.parameters()):
            p_meta += eps * (p_task.detach() - p_meta.detach())  # expect: TL104


def reptile_data(meta_model, learner, eps=0.1):
    for p_meta, p_task in zip(meta_model.parameters(), learner.parameters()):
        p_meta.data.add_(eps * (p_task.data - p_meta.data))  # clean

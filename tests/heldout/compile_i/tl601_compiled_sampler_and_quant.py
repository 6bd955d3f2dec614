"""TL601 probe: a Karras/Euler diffusion sampler step decorated with `@torch.compile` that reads
`sigma.item()` to pick the churn, branches on `(sigma_next == 0).all()`, takes `math.sqrt` of a
tensor and prints the step size; and a fake-quantized MLP with a custom straight-through
`autograd.Function`, compiled at its construction, whose `forward` tests `if scale == 0:` on a
tensor; near misses are `torch.sqrt` of the same quantity, a branch on a Python float argument,
a branch on `self.training`, a shape read with `x.shape[-1]`, and `torch.where` for the
data-dependent choice."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


@torch.compile
def euler_step(denoiser, x, sigma, sigma_next, s_churn: float = 0.0):
    gamma = min(s_churn, 2 ** 0.5 - 1) if sigma.item() > 0.05 else 0.0  # expect: TL601
    if s_churn > 0:  # clean
        sigma_hat = sigma * (gamma + 1)
        x = x + torch.randn_like(x) * torch.sqrt(sigma_hat ** 2 - sigma ** 2)  # clean
    else:
        sigma_hat = sigma
    denoised = denoiser(x, sigma_hat)
    d = (x - denoised) / sigma_hat
    if (sigma_next == 0).all():  # expect: TL601
        return denoised
    dt = sigma_next - sigma_hat
    noise_scale = math.sqrt(sigma_next ** 2)  # expect: TL601
    print("dt", dt)  # expect: TL601
    return x + d * dt, noise_scale


class STERound(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        return torch.clamp(torch.round(x / scale), -128, 127) * scale

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out, None


class FakeQuantMLP(nn.Module):
    def __init__(self, d_in, d_hidden, d_out):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_out)

    def forward(self, x):
        if x.shape[-1] != self.fc1.in_features:  # clean
            raise ValueError("bad feature size")
        w = self.fc1.weight
        scale = w.abs().max() / 127
        if scale == 0:  # expect: TL601
            scale = scale + 1e-8
        safe_scale = torch.where(scale > 0, scale, torch.full_like(scale, 1e-8))  # clean
        h = F.linear(x, STERound.apply(w, safe_scale), self.fc1.bias)
        if self.training:  # clean
            h = F.dropout(h, 0.1)
        return self.fc2(F.relu(h))


qat_model = torch.compile(FakeQuantMLP(64, 256, 10))

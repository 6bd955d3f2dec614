"""TL701 probe: removed names reached through imports: `from torch._six import inf`, a removed
solver imported under another name and then used, against `math.inf` and `torch.linalg.solve`
imported the same way."""
import math

import torch
from torch._six import inf  # expect: TL701
from torch import solve as legacy_solve  # expect: TL701
from torch.linalg import solve


def clip_norm(parameters, max_norm, norm_type=2.0):
    grads = [p.grad for p in parameters if p.grad is not None]
    if norm_type == inf:
        total = max(g.abs().max() for g in grads)
    else:
        total = torch.norm(torch.stack([torch.linalg.vector_norm(g, norm_type) for g in grads]), norm_type)  # expect: TL704
    coef = max_norm / (total + 1e-6)
    for g in grads:
        g.mul_(coef.clamp(max=1.0))
    return total


def affine_from_points(src, dst):
    A = torch.cat([src, torch.ones_like(src[:, :1])], dim=1)
    params, _ = legacy_solve(A.T @ dst, A.T @ A)  # expect: TL701
    return params


def affine_from_points_v2(src, dst):
    A = torch.cat([src, torch.ones_like(src[:, :1])], dim=1)
    return solve(A.T @ A, A.T @ dst)  # clean


def finite_or_inf(x):
    return x if math.isfinite(x) else math.inf  # clean

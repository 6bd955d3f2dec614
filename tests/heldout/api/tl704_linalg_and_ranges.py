"""TL704 probe: a pose-graph utility module on deprecated functions: `torch.svd` for a Procrustes
fit, `torch.cholesky`, `torch.range` and `torch.chain_matmul`, against `torch.linalg.svd`,
`torch.linalg.cholesky`, `torch.arange` and `torch.linalg.multi_dot`."""
import torch


def procrustes(A, B):
    U, S, V = torch.svd(A.T @ B)  # expect: TL704
    R = V @ U.T
    return R


def procrustes_v2(A, B):
    U, S, Vh = torch.linalg.svd(A.T @ B)  # clean
    return Vh.T @ U.T


def sample_correlated(cov, n):
    L = torch.cholesky(cov)  # expect: TL704
    return torch.randn(n, cov.shape[0]) @ L.T


def timestamps(t0, t1, dt):
    return torch.range(t0, t1, dt)  # expect: TL704


def timestamps_v2(t0, t1, dt):
    return torch.arange(t0, t1 + dt, dt)  # clean


def chain(poses):
    return torch.chain_matmul(*poses)  # expect: TL704


def chain_v2(poses):
    return torch.linalg.multi_dot(poses)  # clean

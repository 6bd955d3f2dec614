"""TL701 probe: a kernel-ridge / PCA toolkit written for torch 1.x: `torch.lstsq`, `torch.eig`
and the `symeig` method of a known tensor, against their `torch.linalg` replacements and
NumPy's `lstsq`."""
import numpy as np
import torch


def ridge_fit(X, y, lam=1e-3):
    A = X.T @ X + lam * torch.eye(X.shape[1], dtype=X.dtype)
    solution, _ = torch.lstsq(X.T @ y, A)  # expect: TL701
    return solution[: X.shape[1]]


def ridge_fit_v2(X, y, lam=1e-3):
    A = X.T @ X + lam * torch.eye(X.shape[1], dtype=X.dtype)
    return torch.linalg.lstsq(A, X.T @ y).solution  # clean


def principal_axes(X, k):
    cov = torch.cov(X.T)
    evals, evecs = cov.symeig(eigenvectors=True)  # expect: TL701
    return evecs[:, -k:].flip(-1)


def spectrum(M):
    evals, _ = torch.eig(M, eigenvectors=False)  # expect: TL701
    return evals[:, 0]


def spectrum_v2(M):
    return torch.linalg.eigvals(M).real  # clean


def numpy_baseline(X, y):
    return np.linalg.lstsq(X, y, rcond=None)[0]  # clean

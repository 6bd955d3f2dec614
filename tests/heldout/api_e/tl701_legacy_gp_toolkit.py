"""TL701 probe: a Gaussian-process toolkit written for torch 1.x: `torch.eig` of a kernel
matrix, `torch.matrix_rank` on a design matrix, and `torch.solve` imported by name under an
alias (the import and its use); near misses are the `torch.linalg` spellings, SciPy's
`scipy.linalg.solve`, a method named `solve` on the project's own solver object, and
`torch.cholesky_solve` (not removed)."""
import scipy.linalg
import torch
from torch import solve as legacy_solve  # expect: TL701


class ConjugateGradient:
    def __init__(self, tol=1e-6):
        self.tol = tol

    def solve(self, A, b):
        return torch.linalg.solve(A, b)


def kernel_spectrum(K):
    evals, evecs = torch.eig(K, eigenvectors=True)  # expect: TL701
    return evals[:, 0], evecs


def kernel_spectrum_v2(K):
    return torch.linalg.eigh(K)  # clean


def design_rank(X):
    return torch.matrix_rank(X)  # expect: TL701


def design_rank_v2(X):
    return torch.linalg.matrix_rank(X)  # clean


def posterior_mean(K, y, noise=1e-3):
    A = K + noise * torch.eye(K.size(0))
    alpha, _ = legacy_solve(y, A)  # expect: TL701
    return K @ alpha


def posterior_mean_chol(K, y, noise=1e-3):
    L = torch.linalg.cholesky(K + noise * torch.eye(K.size(0)))
    return K @ torch.cholesky_solve(y, L)  # clean


def posterior_mean_scipy(K, y):
    return scipy.linalg.solve(K.numpy(), y.numpy())  # clean


def posterior_mean_cg(K, y):
    return ConjugateGradient().solve(K, y)  # clean

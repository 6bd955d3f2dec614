"""TL701 and TL704 probe: a physics-informed model written for torch 1.x being ported: removed
`torch.symeig` and `torch.eig` for modal analysis, `inf` imported from the removed `torch._six`,
`torch.chain_matmul` for a transfer-matrix product, AMP through `torch.cuda.amp.GradScaler()` and
`with torch.cuda.amp.autocast():`, and per-sample Jacobians through `from functorch import
jacrev, vmap` (the import and each use); near misses are the ported half of the file
(`torch.linalg.eigh`, `torch.linalg.eigvals`, `math.inf`, `torch.linalg.multi_dot`,
`torch.amp.GradScaler("cuda")`, `torch.autocast("cuda")`, `torch.func.jacrev`), and
`scipy.linalg.eigh` / `np.linalg.eig` on NumPy arrays."""
import math

import numpy as np
import scipy.linalg
import torch
from functorch import jacrev, vmap  # expect: TL704
from torch._six import inf  # expect: TL701


def modes_legacy(stiffness, mass):
    evals, evecs = torch.symeig(torch.linalg.solve(mass, stiffness), eigenvectors=True)  # expect: TL701
    damped, _ = torch.eig(stiffness, eigenvectors=False)  # expect: TL701
    return evals.clamp(max=inf), evecs, damped


def modes_ported(stiffness, mass):
    evals, evecs = torch.linalg.eigh(torch.linalg.solve(mass, stiffness))  # clean
    damped = torch.linalg.eigvals(stiffness)  # clean
    return evals.clamp(max=math.inf), evecs, damped


def modes_reference(stiffness: np.ndarray, mass: np.ndarray):
    evals, evecs = scipy.linalg.eigh(stiffness, mass)  # clean
    damped, _ = np.linalg.eig(stiffness)  # clean
    return evals, evecs, damped


def transfer_legacy(layers):
    return torch.chain_matmul(*layers)  # expect: TL704


def transfer_ported(layers):
    return torch.linalg.multi_dot(layers)  # clean


def jacobians_legacy(pinn, coords):
    return vmap(jacrev(pinn))(coords)  # expect: TL704


def jacobians_ported(pinn, coords):
    return torch.func.vmap(torch.func.jacrev(pinn))(coords)  # clean


def train_legacy(pinn, loader, optimizer, residual):
    scaler = torch.cuda.amp.GradScaler()  # expect: TL704
    for coords, target in loader:
        optimizer.zero_grad(set_to_none=True)
        with torch.cuda.amp.autocast():  # expect: TL704
            loss = residual(pinn, coords, target)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


def train_ported(pinn, loader, optimizer, residual):
    scaler = torch.amp.GradScaler("cuda")  # clean
    for coords, target in loader:
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):  # clean
            loss = residual(pinn, coords, target)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()

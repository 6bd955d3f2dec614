"""TL701 and TL704 probe: legacy code from the `Variable` era kept alive in a research repo. A
whitening step solves with the removed `torch.solve`, a spectral-norm estimate calls the removed
`torch.symeig`, a PCA of attention maps takes `torch.svd`, a pointer network's orthogonal init uses
`torch.qr`, gradient-penalty and embedding norms go through `torch.norm`, distance features use
`torch.ger`, mixed precision comes from `torch.cuda.amp` (`autocast()` and `GradScaler()`) and an
inf constant from `torch._six`; near misses are the `torch.linalg` ports, `torch.outer`,
`torch.amp.autocast("cuda")` / `torch.amp.GradScaler("cuda")`, `torch.nn.utils.clip_grad_norm_`
(a `norm` that is no deprecated function) and `torch.nn.init.orthogonal_`."""
import torch
import torch.nn as nn
from torch._six import inf  # expect: TL701
from torch.autograd import Variable


def whiten_legacy(cov, x):
    sol, _ = torch.solve(x, cov)  # expect: TL701
    return sol


def whiten(cov, x):
    return torch.linalg.solve(cov, x)  # clean


def spectral_radius_legacy(w):
    evals, _ = torch.symeig(w @ w.T, eigenvectors=True)  # expect: TL701
    return evals.max().sqrt()


def spectral_radius(w):
    return torch.linalg.eigvalsh(w @ w.T).max().sqrt()  # clean


def attention_pca_legacy(maps, k=3):
    u, s, v = torch.svd(maps - maps.mean(0))  # expect: TL704
    return u[:, :k] * s[:k]


def attention_pca(maps, k=3):
    u, s, vh = torch.linalg.svd(maps - maps.mean(0), full_matrices=False)  # clean
    return u[:, :k] * s[:k]


def orthogonal_init_legacy(rows, cols):
    q, r = torch.qr(torch.randn(rows, cols))  # expect: TL704
    return q * torch.sign(torch.diagonal(r))


def orthogonal_init(layer: nn.Linear):
    nn.init.orthogonal_(layer.weight)  # clean
    q, r = torch.linalg.qr(torch.randn(layer.out_features, layer.in_features))  # clean
    return q


def gradient_penalty_legacy(critic, real, fake):
    alpha = torch.rand(real.size(0), 1)
    interp = Variable(alpha * real + (1 - alpha) * fake, requires_grad=True)
    grads = torch.autograd.grad(critic(interp).sum(), interp, create_graph=True)[0]
    return ((torch.norm(grads, 2, dim=1) - 1) ** 2).mean()  # expect: TL704


def gradient_penalty(critic, real, fake):
    alpha = torch.rand(real.size(0), 1, device=real.device)
    interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    grads = torch.autograd.grad(critic(interp).sum(), interp, create_graph=True)[0]
    return ((torch.linalg.vector_norm(grads, 2, dim=1) - 1) ** 2).mean()  # clean


def pair_features(a, b):
    return torch.ger(a, b), torch.outer(a, b)  # expect: TL704


def train_legacy(model, loader, optimizer, max_norm=inf):
    scaler = torch.cuda.amp.GradScaler()  # expect: TL704
    for x, y in loader:
        optimizer.zero_grad(set_to_none=True)
        with torch.cuda.amp.autocast():  # expect: TL704
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)  # clean
        scaler.step(optimizer)
        scaler.update()


def train(model, loader, optimizer):
    scaler = torch.amp.GradScaler("cuda")  # clean
    for x, y in loader:
        optimizer.zero_grad(set_to_none=True)
        with torch.amp.autocast("cuda", dtype=torch.float16):  # clean
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()

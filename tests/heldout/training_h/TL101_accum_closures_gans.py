"""TL101 probe: gradient accumulation under DDP's `no_sync()` that clears nothing, an LBFGS fit whose
closure recomputes the loss without clearing, a two-optimizer GAN step that clears only the
discriminator's optimizer, and a notebook-style top-level loop; near misses clear inside the
accumulation boundary `if`, inside the closure, on the whole GAN module, and with `p.grad = None`."""
import contextlib

import torch
import torch.nn.functional as F
from torch import nn

ACCUM = 4


def accumulate_without_clearing(ddp_model, optimizer, loader):
    for step, (x, y) in enumerate(loader):  # expect: TL101
        sync = (step + 1) % ACCUM == 0
        ctx = contextlib.nullcontext() if sync else ddp_model.no_sync()
        with ctx:
            loss = F.cross_entropy(ddp_model(x), y) / ACCUM
            loss.backward()
        if sync:
            optimizer.step()


def accumulate_clearing_at_boundary(ddp_model, optimizer, loader):
    for step, (x, y) in enumerate(loader):  # clean
        sync = (step + 1) % ACCUM == 0
        ctx = contextlib.nullcontext() if sync else ddp_model.no_sync()
        with ctx:
            loss = F.cross_entropy(ddp_model(x), y) / ACCUM
            loss.backward()
        if sync:
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)


def lbfgs_fit(model, inputs, targets, iters=20):
    optimizer = torch.optim.LBFGS(model.parameters(), lr=1.0, max_iter=5)
    for _ in range(iters):  # expect: TL101
        def closure():
            loss = F.mse_loss(model(inputs), targets)
            loss.backward()
            return loss
        optimizer.step(closure)


def lbfgs_fit_clearing(model, inputs, targets, iters=20):
    optimizer = torch.optim.LBFGS(model.parameters(), lr=1.0, max_iter=5)
    for _ in range(iters):  # clean
        def closure():
            optimizer.zero_grad()
            loss = F.mse_loss(model(inputs), targets)
            loss.backward()
            return loss
        optimizer.step(closure)


def gan_steps(gen, disc, opt_g, opt_d, loader, z_dim=128):
    for real in loader:  # expect: TL101
        z = torch.randn(real.size(0), z_dim, device=real.device)
        fake = gen(z)
        opt_d.zero_grad(set_to_none=True)
        d_loss = F.softplus(disc(fake.detach())).mean() + F.softplus(-disc(real)).mean()
        d_loss.backward()
        opt_d.step()
        g_loss = F.softplus(-disc(fake)).mean()
        g_loss.backward()
        opt_g.step()


class GAN(nn.Module):
    def __init__(self, gen, disc):
        super().__init__()
        self.gen, self.disc = gen, disc


def gan_steps_clearing_module(gan, opt_g, opt_d, loader, z_dim=128):
    for real in loader:  # clean
        gan.zero_grad(set_to_none=True)
        fake = gan.gen(torch.randn(real.size(0), z_dim, device=real.device))
        d_loss = F.softplus(gan.disc(fake.detach())).mean() + F.softplus(-gan.disc(real)).mean()
        d_loss.backward()
        opt_d.step()
        gan.disc.requires_grad_(False)
        F.softplus(-gan.disc(fake)).mean().backward()
        gan.disc.requires_grad_(True)
        opt_g.step()


def manual_none_clearing(model, optimizer, loader):
    for x, y in loader:  # clean
        for p in model.parameters():
            p.grad = None
        F.cross_entropy(model(x), y).backward()
        optimizer.step()


net = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 1))
adam = torch.optim.Adam(net.parameters(), lr=1e-3)
data = [(torch.randn(32, 16), torch.randn(32, 1)) for _ in range(10)]
for epoch in range(3):
    for xb, yb in data:  # expect: TL101
        F.mse_loss(net(xb), yb).backward()
        adam.step()

"""TL301 probe: loss bookkeeping that keeps graphs alive in settings with unusual loops: gradient
accumulation that sums micro-batch losses into a running total across the accumulation window, a
two-optimizer GAN logging both losses into a history dict, an LBFGS loop collecting what
`optimizer.step(closure)` returns (the closure's loss, graph and all), a k-fold loop keeping each fold's train loss, and a notebook cell; near
misses log `.item()` every N steps, `.detach()` before appending, and a per-step `loss = loss + aux` that
is rebound inside the iteration."""
from collections import defaultdict

import torch
import torch.nn.functional as F
from torch import nn


def accumulate(model, loader, optimizer, accum=4):
    window_loss = 0.0
    history = []
    for i, (x, y) in enumerate(loader):
        loss = F.cross_entropy(model(x), y) / accum
        loss.backward()
        window_loss += loss  # expect: TL301
        if (i + 1) % accum == 0:
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            history.append(float(window_loss))
            window_loss = 0.0
    return history


def accumulate_detached(model, loader, optimizer, accum=4):
    window_loss = 0.0
    history = []
    for i, (x, y) in enumerate(loader):
        loss = F.cross_entropy(model(x), y) / accum
        loss.backward()
        window_loss += loss.detach()  # clean
        if (i + 1) % accum == 0:
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            history.append(float(window_loss))
            window_loss = 0.0
    return history


def gan_history(gen, disc, opt_g, opt_d, loader, z_dim=128):
    log = defaultdict(list)
    for real in loader:
        fake = gen(torch.randn(real.size(0), z_dim, device=real.device))
        opt_d.zero_grad(set_to_none=True)
        d_loss = F.softplus(disc(fake.detach())).mean() + F.softplus(-disc(real)).mean()
        d_loss.backward()
        opt_d.step()
        opt_g.zero_grad(set_to_none=True)
        g_loss = F.softplus(-disc(fake)).mean()
        g_loss.backward()
        opt_g.step()
        log["d"].append(d_loss)  # expect: TL301
        log["g"].append(g_loss.detach())  # clean
    return log


def lbfgs_losses(model, x, y, iters=10):
    optimizer = torch.optim.LBFGS(model.parameters(), history_size=10)
    losses = []

    def closure():
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        return loss

    for _ in range(iters):
        losses.append(optimizer.step(closure))  # expect: TL301
    return losses


def kfold_train_losses(folds, make_model, epochs=5):
    fold_losses = []
    for loader in folds:
        model = make_model()
        optimizer = torch.optim.Adam(model.parameters())
        for epoch in range(epochs):
            for x, y in loader:
                optimizer.zero_grad(set_to_none=True)
                loss = F.mse_loss(model(x), y)
                aux = 1e-4 * sum(p.pow(2).sum() for p in model.parameters())
                loss = loss + aux  # clean
                loss.backward()
                optimizer.step()
                fold_losses.append(loss)  # expect: TL301
    return fold_losses


def logged_every(model, loader, optimizer):
    running = []
    for step, (x, y) in enumerate(loader):
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        if step % 100 == 0:
            running.append(loss.item())  # clean


net = nn.Linear(4, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
losses = []
for step in range(200):
    xb, yb = torch.randn(16, 4), torch.randn(16, 1)
    opt.zero_grad()
    out = net(xb)
    loss = F.mse_loss(out, yb)
    loss.backward()
    opt.step()
    losses.append(loss)  # expect: TL301

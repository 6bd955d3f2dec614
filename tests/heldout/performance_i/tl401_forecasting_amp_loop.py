"""TL401 probe: a time-series forecaster trained on the GPU under `torch.autocast` with a
`GradScaler`: every step appends `loss.item()` to a history list, computes a batch MAE with
`.cpu()` and reads the clipped gradient norm with `.item()` for a progress bar; near misses are the
NaN guard that stops training (`loss_value = loss.item()` then `sys.exit(1)` when not finite), an
early stop on a tiny loss that breaks out, the same logging under `if step % log_every == 0`,
`scaler.get_scale()` (a Python float already), and `.item()` in the validation function (no
training loop)."""
import math
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class LSTMForecaster(nn.Module):
    def __init__(self, n_series, hidden=128, horizon=24):
        super().__init__()
        self.lstm = nn.LSTM(n_series, hidden, num_layers=2, batch_first=True, dropout=0.1)
        self.head = nn.Linear(hidden, horizon * n_series)
        self.horizon = horizon
        self.n_series = n_series

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out[:, -1]).view(x.size(0), self.horizon, self.n_series)


@torch.no_grad()
def validate(model, loader, device):
    model.eval()
    total, n = 0.0, 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        total += F.l1_loss(model(x), y, reduction="sum").item()  # clean
        n += y.numel()
    return total / n


def train(model, train_loader, val_loader, device, epochs=30, log_every=100):
    model.to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    scaler = torch.amp.GradScaler("cuda")
    history, step = [], 0
    for epoch in range(epochs):
        model.train()
        for x, y in train_loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            with torch.autocast("cuda", dtype=torch.float16):
                pred = model(x)
                loss = F.huber_loss(pred, y)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            grad_norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            loss_value = loss.item()  # clean
            if not math.isfinite(loss_value):
                print(f"loss is {loss_value}, stopping")
                sys.exit(1)
            history.append(loss.detach().float().item())  # expect: TL401
            batch_mae = (pred.detach() - y).abs().mean().cpu()  # expect: TL401
            print(f"epoch {epoch} mae {batch_mae:.4f} gnorm {grad_norm.item():.2f}", end="\r")  # expect: TL401
            if step % log_every == 0:
                print(f"step {step} loss {loss.item():.4f} scale {scaler.get_scale()}")  # clean
            step += 1
        val_mae = validate(model, val_loader, device)
        print(f"epoch {epoch} val mae {val_mae:.4f}")
    return history


def fit_until(model, x, y, device, tol=1e-4, max_steps=10_000):
    model.to(device)
    optimizer = torch.optim.LBFGS(model.parameters(), lr=0.5)
    x, y = x.to(device), y.to(device)
    model.train()
    for _ in range(max_steps):
        def closure():
            optimizer.zero_grad(set_to_none=True)
            loss = F.mse_loss(model(x), y)
            loss.backward()
            return loss
        loss = optimizer.step(closure)
        if loss.item() < tol:  # clean
            break
    return model

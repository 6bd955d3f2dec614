"""TL302 probe: an evaluation helper called from the training loop that switches to eval mode but keeps
grad on, an early-stopping check computed inline after `model.eval()` in the training function, an EMA
copy scored after `ema_model.eval()`, and a k-fold out-of-fold prediction helper; near misses run under
`torch.inference_mode()`, freeze the EMA copy with `requires_grad_(False)` first, evaluate a Lightning
`validation_step` (Lightning disables grad itself), and compute saliency maps that do backpropagate."""
import copy

import pytorch_lightning as pl
import torch
from torch import nn
import torch.nn.functional as F


def evaluate(model, loader):
    model.eval()
    total = 0.0
    for x, y in loader:
        total += F.l1_loss(model(x), y, reduction="sum")  # expect: TL302
    return float(total) / len(loader.dataset)


def train(model, train_loader, val_loader, epochs=40, patience=5):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    best, bad = float("inf"), 0
    for epoch in range(epochs):
        model.train()
        for x, y in train_loader:
            optimizer.zero_grad(set_to_none=True)
            F.l1_loss(model(x), y).backward()
            optimizer.step()
        model.eval()
        val = sum(F.l1_loss(model(x), y, reduction="sum") for x, y in val_loader)  # expect: TL302
        if val < best:
            best, bad = val, 0
        else:
            bad += 1
            if bad >= patience:
                break
        print(epoch, evaluate(model, val_loader))


def score_ema(model, loader):
    ema_model = copy.deepcopy(model)
    ema_model.eval()
    hits = 0
    for x, y in loader:
        hits += (ema_model(x).argmax(-1) == y).sum()  # expect: TL302
    return hits


def score_frozen_ema(model, loader):
    ema_model = copy.deepcopy(model).requires_grad_(False)
    ema_model.eval()
    hits = 0
    for x, y in loader:
        hits += (ema_model(x).argmax(-1) == y).sum()  # clean
    return hits


def predict_oof(fold_models, loaders):
    oof = []
    for model, loader in zip(fold_models, loaders):
        model.eval()
        for x, _ in loader:
            oof.append(model(x).sigmoid())  # expect: TL302
    return torch.cat(oof)


def predict_oof_fixed(fold_models, loaders):
    oof = []
    with torch.inference_mode():
        for model, loader in zip(fold_models, loaders):
            model.eval()
            oof.extend(model(x).sigmoid() for x, _ in loader)  # clean
    return torch.cat(oof)


def saliency(model, images, targets):
    model.eval()
    images = images.clone().requires_grad_(True)
    scores = model(images).gather(1, targets[:, None]).sum()  # clean
    scores.backward()
    return images.grad.abs().amax(dim=1)


class LitRegressor(pl.LightningModule):
    def __init__(self, net: nn.Module):
        super().__init__()
        self.net = net

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_mse", F.mse_loss(self.net(x), y))  # clean

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)

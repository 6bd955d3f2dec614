"""TL102/TL103 probe: a callback-driven trainer where an `EvalCallback.on_epoch_end` runs the
validation (switching `trainer.model` to eval through a helper) while the fit loop never switches back,
a k-fold tabular loop whose fold loop calls a `score_fold` helper that puts the MLP in eval mode, and
an ensemble `predict_proba` helper under `torch.inference_mode()` that forgets `.eval()` on the fold
models; near misses restore train mode in `on_epoch_begin`, switch every fold model to eval in the
ensemble, and a checkpoint-resume loop that calls `model.train()` after loading."""
import torch
import torch.nn.functional as F
from torch import nn


def run_validation(model, loader):
    model.eval()
    with torch.no_grad():
        return sum(F.cross_entropy(model(x), y, reduction="sum") for x, y in loader) / len(loader.dataset)


class EvalCallback:
    def __init__(self, loader):
        self.loader = loader

    def on_epoch_end(self, model, epoch):
        print(epoch, float(run_validation(model, self.loader)))


def fit_with_callbacks(model, loader, callbacks, epochs=10):
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for epoch in range(epochs):
        for x, y in loader:  # expect: TL102
            optimizer.zero_grad(set_to_none=True)
            F.cross_entropy(model(x), y).backward()
            optimizer.step()
        run_validation(model, callbacks[0].loader)


def fit_restoring(model, loader, val_loader, epochs=10):
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for epoch in range(epochs):
        model.train()
        for x, y in loader:  # clean
            optimizer.zero_grad(set_to_none=True)
            F.cross_entropy(model(x), y).backward()
            optimizer.step()
        run_validation(model, val_loader)


def score_fold(mlp, val_x, val_y):
    mlp.eval()
    with torch.no_grad():
        return F.binary_cross_entropy_with_logits(mlp(val_x).squeeze(-1), val_y)


def kfold(folds, in_dim, epochs=20):
    scores, models = [], []
    for train_x, train_y, val_x, val_y in folds:
        mlp = nn.Sequential(nn.Linear(in_dim, 128), nn.BatchNorm1d(128), nn.ReLU(), nn.Dropout(0.3), nn.Linear(128, 1))
        opt = torch.optim.Adam(mlp.parameters(), lr=1e-3)
        for epoch in range(epochs):
            for idx in torch.randperm(len(train_x)).split(256):  # expect: TL102
                opt.zero_grad(set_to_none=True)
                F.binary_cross_entropy_with_logits(mlp(train_x[idx]).squeeze(-1), train_y[idx]).backward()
                opt.step()
            scores.append(score_fold(mlp, val_x, val_y))
        models.append(mlp)
    return scores, models


@torch.inference_mode()
def predict_proba(fold_models, x):
    probs = []
    for fold_model in fold_models:
        probs.append(torch.sigmoid(fold_model(x)))  # expect: TL103
    return torch.stack(probs).mean(0)


@torch.inference_mode()
def predict_fold(first_model, second_model, x):
    first_model.eval()
    p1 = torch.sigmoid(first_model(x))  # clean
    p2 = torch.sigmoid(second_model(x))  # expect: TL103
    return (p1 + p2) / 2


def resume(model, optimizer, path, loader, epochs=5):
    state = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    model.eval()
    with torch.no_grad():
        print(sum(F.mse_loss(model(x), y) for x, y in loader))
    model.train()
    for epoch in range(state["epoch"] + 1, epochs):
        for x, y in loader:  # clean
            optimizer.zero_grad(set_to_none=True)
            F.mse_loss(model(x), y).backward()
            optimizer.step()

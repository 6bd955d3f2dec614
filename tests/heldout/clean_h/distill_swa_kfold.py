"""Tabular k-fold training of a student MLP distilled from a frozen teacher ensemble, with SWA over
the last epochs, BN statistics refreshed for the averaged model, and out-of-fold predictions."""
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.optim.swa_utils import SWALR, AveragedModel, update_bn
from torch.utils.data import DataLoader, TensorDataset


def make_mlp(in_dim, n_classes, hidden=256):
    return nn.Sequential(
        nn.Linear(in_dim, hidden), nn.BatchNorm1d(hidden), nn.SiLU(), nn.Dropout(0.1),
        nn.Linear(hidden, hidden), nn.BatchNorm1d(hidden), nn.SiLU(), nn.Dropout(0.1),
        nn.Linear(hidden, n_classes),
    )


@torch.no_grad()
def teacher_probs(teachers, x, T):
    for t in teachers:
        t.eval()
    return torch.stack([F.softmax(t(x) / T, dim=-1) for t in teachers]).mean(0)


@torch.inference_mode()
def predict(model, x, batch_size=1024):
    model.eval()
    return torch.cat([F.softmax(model(chunk), dim=-1) for chunk in x.split(batch_size)])


def fit_fold(train_x, train_y, teachers, n_classes, epochs=40, swa_start=30, T=3.0, alpha=0.7):
    loader = DataLoader(TensorDataset(train_x, train_y), batch_size=512, shuffle=True, num_workers=2)
    student = make_mlp(train_x.shape[1], n_classes)
    optimizer = torch.optim.AdamW(student.parameters(), lr=2e-3, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=swa_start)
    swa_model = AveragedModel(student)
    swa_scheduler = SWALR(optimizer, swa_lr=5e-4)
    history = []
    for epoch in range(epochs):
        student.train()
        epoch_loss = torch.zeros(())
        for x, y in loader:
            soft = teacher_probs(teachers, x, T)
            logits = student(x)
            kd = F.kl_div(F.log_softmax(logits / T, dim=-1), soft, reduction="batchmean") * T * T
            loss = alpha * kd + (1 - alpha) * F.cross_entropy(logits, y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            epoch_loss += loss.detach() * len(y)
        if epoch >= swa_start:
            swa_model.update_parameters(student)
            swa_scheduler.step()
        else:
            scheduler.step()
        history.append(float(epoch_loss) / len(loader.dataset))
    update_bn(loader, swa_model)
    return swa_model, history


def run_kfold(x, y, teachers, n_classes, k=5, seed=0):
    rng = np.random.default_rng(seed)
    folds = np.array_split(rng.permutation(len(x)), k)
    oof = torch.zeros(len(x), n_classes)
    for i, val_idx in enumerate(folds):
        train_idx = np.concatenate([f for j, f in enumerate(folds) if j != i])
        model, history = fit_fold(x[train_idx], y[train_idx], teachers, n_classes)
        oof[val_idx] = predict(model, x[val_idx])
        print(f"fold {i}: final train loss {history[-1]:.4f}")
    acc = (oof.argmax(-1) == y).float().mean()
    print(f"oof accuracy {float(acc):.4f}")
    return oof

"""TL205 probe: a two-tower recommender's evaluation and a forecasting metric helper that wrap
values that already are tensors in `torch.tensor(...)`: the item tower's output (a model call),
`torch.stack` of per-batch losses, and a parameter annotated `torch.Tensor` re-wrapped to set its
dtype; near misses are `torch.tensor` of a NumPy window stack, of a list of ids, of a pandas
column's `.values`, of a Python number from `.item()`, and `torch.as_tensor` of a tensor (which
does not copy)."""
import numpy as np
import torch
import torch.nn as nn


class TwoTower(nn.Module):
    def __init__(self, n_users, n_items, dim=64):
        super().__init__()
        self.user = nn.Embedding(n_users, dim)
        self.item = nn.Embedding(n_items, dim)

    def forward(self, user_ids, item_ids):
        return (self.user(user_ids) * self.item(item_ids)).sum(-1)


@torch.no_grad()
def build_item_index(model, n_items, device):
    model.eval()
    emb = model.item(torch.arange(n_items, device=device))
    return torch.tensor(emb).cpu()  # expect: TL205


@torch.no_grad()
def eval_epoch(model, loader, loss_fn, device):
    model.eval()
    losses = []
    for users, items, labels in loader:
        scores = model(users.to(device), items.to(device))
        losses.append(loss_fn(scores, labels.to(device).float()))
    return torch.tensor(torch.stack(losses)).mean()  # expect: TL205


def mape(pred: torch.Tensor, target: torch.Tensor, eps=1e-8):
    target = torch.tensor(target, dtype=pred.dtype)  # expect: TL205
    return ((pred - target).abs() / (target.abs() + eps)).mean()


def make_windows(series: np.ndarray, window: int, horizon: int):
    xs = [series[i:i + window] for i in range(len(series) - window - horizon)]
    ys = [series[i + window:i + window + horizon] for i in range(len(series) - window - horizon)]
    return torch.tensor(np.stack(xs), dtype=torch.float32), torch.tensor(np.stack(ys), dtype=torch.float32)  # clean


def encode_history(df, item_vocab):
    ids = [item_vocab[i] for i in df["item_id"]]
    prices = torch.tensor(df["price"].values, dtype=torch.float32)  # clean
    return torch.tensor(ids, dtype=torch.long), prices  # clean


def as_metric(loss):
    return torch.tensor(loss.item())  # clean


def to_float(pred: torch.Tensor):
    return torch.as_tensor(pred, dtype=torch.float32)  # clean

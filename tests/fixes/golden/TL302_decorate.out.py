"""Validation for a fraud-detection MLP."""
import torch


@torch.no_grad()
def validate(model, loader, threshold=0.5):
    model.eval()
    tp = fp = fn = 0
    for x, y in loader:
        prob = torch.sigmoid(model(x))
        pred = prob > threshold
        tp += (pred & (y == 1)).sum().item()
        fp += (pred & (y == 0)).sum().item()
        fn += (~pred & (y == 1)).sum().item()
    return tp / max(tp + fp, 1), tp / max(tp + fn, 1)

"""Scoring script."""
import torch


@torch.no_grad()
def predict(model, loader):
    model.eval()
    outputs = []
    for x in loader:
        outputs.append(model(x))
    return outputs

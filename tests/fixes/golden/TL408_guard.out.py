# fix: Run
import os
import torch

if os.environ.get("TORCH_DETECT_ANOMALY"):
    torch.autograd.set_detect_anomaly(True)


def train(model, loader, optimizer):
    for x, y in loader:
        optimizer.zero_grad()
        model(x).sum().backward()
        optimizer.step()

import torch
import torch.nn.functional as F


def train(model, loader, optimizer):
    # debugging NaNs
    torch.autograd.set_detect_anomaly(True)

    for x, y in loader:
        optimizer.zero_grad()
        F.mse_loss(model(x), y).backward()
        optimizer.step()

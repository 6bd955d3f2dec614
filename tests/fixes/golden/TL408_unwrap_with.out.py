import torch
import torch.nn.functional as F


def train(model, loader, optimizer):
    for x, y in loader:
        # one step
        optimizer.zero_grad()
        F.mse_loss(model(x), y).backward()
        optimizer.step()
    return model

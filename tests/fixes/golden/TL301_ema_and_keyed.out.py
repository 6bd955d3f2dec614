import torch
import torch.nn.functional as F


def train(model, optimizer, loader):
    sums = {"loss": torch.zeros(())}
    smoothed = torch.zeros(())
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        sums["loss"] += loss.detach()
        smoothed = 0.98 * smoothed + (0.02 * loss).detach()
    return sums, smoothed

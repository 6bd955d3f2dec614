import torch
import torch.nn.functional as F


def train(model, optimizer, loader):
    kept = []
    for x, y in loader:
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        kept.extend(logits[:2].detach())
    return kept

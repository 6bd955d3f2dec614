import torch
import torch.nn as nn
import torch.nn.functional as F


def scene_loss(scene_logits, scene_labels):
    probs = torch.softmax(scene_logits, dim=-1)
    return F.cross_entropy(scene_logits, scene_labels)


def train_epoch(model, loader, optimizer):
    criterion = nn.CrossEntropyLoss()
    for x, y in loader:
        # class probabilities
        logits = model(x)
        probs = torch.softmax(logits, dim=-1)
        loss = criterion(logits, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

import torch
import torch.nn as nn
import torch.nn.functional as F


def scene_loss(scene_logits, scene_labels):
    probs = torch.softmax(scene_logits, dim=-1)
    return F.cross_entropy(probs, scene_labels)


def train_epoch(model, loader, optimizer):
    criterion = nn.CrossEntropyLoss()
    for x, y in loader:
        # class probabilities
        probs = torch.softmax(model(x), dim=-1)
        loss = criterion(probs, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

"""TL301 probe: a trainer class that keeps losses and logits on `self` across steps, a `total = total + loss`
running sum, and near misses: per-iteration lists, `.detach()` and `float()` copies, a loss rebound per step."""
import torch
from torch import nn
import torch.nn.functional as F


class WakeWordTrainer:
    def __init__(self, model: nn.Module, optimizer, loader):
        self.model = model
        self.optimizer = optimizer
        self.loader = loader
        self.train_losses = []
        self.val_logits = []

    def train_epoch(self, aux_weight=0.1):
        self.model.train()
        total_loss = 0.0
        for mel, label in self.loader:
            logits, aux = self.model(mel)
            loss = F.cross_entropy(logits, label)
            loss = loss + aux_weight * aux.pow(2).mean()  # clean
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            self.optimizer.step()
            self.train_losses.append(loss)  # expect: TL301
            total_loss = total_loss + loss  # expect: TL301
        return total_loss / len(self.loader)

    def train_epoch_fixed(self):
        self.model.train()
        total_loss = torch.zeros(())
        for mel, label in self.loader:
            logits, aux = self.model(mel)
            loss = F.cross_entropy(logits, label)
            step_parts = []
            step_parts.append(loss)  # clean
            step_parts.append(aux.pow(2).mean())
            loss = sum(step_parts)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            self.optimizer.step()
            self.train_losses.append(loss.detach())  # clean
            total_loss += loss.detach()  # clean
        return total_loss / len(self.loader)


def train_collect_logits(model, optimizer, loader):
    model.train()
    all_logits = []
    for x, y in loader:
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        all_logits.append(logits)  # expect: TL301
    return torch.cat(all_logits)

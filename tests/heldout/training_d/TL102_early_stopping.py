"""TL102 probe: an early-stopping loop whose per-epoch validation (a helper switching the model to eval
mode) runs beside a training helper that never switches back, and a k-fold script whose epoch loop
validates inline after `model.train()` was set once before it; near misses are a validation helper that
restores train mode on every path, and a fine-tuning loop over a frozen feature extractor kept in eval
mode on purpose and run under no_grad."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class TextCNN(nn.Module):
    def __init__(self, vocab=30000, dim=200, n_classes=5):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim, padding_idx=0)
        self.convs = nn.ModuleList(nn.Conv1d(dim, 100, k) for k in (3, 4, 5))
        self.drop = nn.Dropout(0.5)
        self.fc = nn.Linear(300, n_classes)

    def forward(self, tokens):
        h = self.emb(tokens).transpose(1, 2)
        pooled = [F.relu(conv(h)).amax(dim=-1) for conv in self.convs]
        return self.fc(self.drop(torch.cat(pooled, dim=1)))


def evaluate(model, loader):
    model.eval()
    total, n = 0.0, 0
    with torch.no_grad():
        for tokens, labels in loader:
            total += F.cross_entropy(model(tokens), labels, reduction="sum")
            n += labels.numel()
    return float(total) / n


def train_one_epoch(model, loader, optimizer):
    for tokens, labels in loader:  # expect: TL102
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(tokens), labels)
        loss.backward()
        optimizer.step()


def fit_with_early_stopping(model, train_loader, val_loader, max_epochs=50, patience=4):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    best_loss, best_state, waited = float("inf"), None, 0
    for epoch in range(max_epochs):
        train_one_epoch(model, train_loader, optimizer)
        val_loss = evaluate(model, val_loader)
        if val_loss < best_loss:
            best_loss, best_state, waited = val_loss, copy.deepcopy(model.state_dict()), 0
        else:
            waited += 1
            if waited >= patience:
                break
    model.load_state_dict(best_state)
    return model


def kfold_inline(folds, epochs=10):
    results = []
    for train_loader, val_loader in folds:
        model = TextCNN()
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        model.train()
        for epoch in range(epochs):
            for tokens, labels in train_loader:  # expect: TL102
                optimizer.zero_grad(set_to_none=True)
                F.cross_entropy(model(tokens), labels).backward()
                optimizer.step()
            model.eval()
            with torch.no_grad():
                hits = sum((model(t).argmax(1) == y).sum() for t, y in val_loader)
            results.append(float(hits))
    return results


def evaluate_and_restore(model, loader):
    model.eval()
    with torch.no_grad():
        hits = sum((model(t).argmax(1) == y).sum() for t, y in loader)
    model.train()
    return float(hits)


def train_epoch_checked(model, loader, optimizer):
    for tokens, labels in loader:  # clean
        optimizer.zero_grad(set_to_none=True)
        F.cross_entropy(model(tokens), labels).backward()
        optimizer.step()


def fit_restoring(model, train_loader, val_loader, epochs=10):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.train()
    for epoch in range(epochs):
        train_epoch_checked(model, train_loader, optimizer)
        print(epoch, evaluate_and_restore(model, val_loader))


def train_probe(backbone, head, loader, epochs=5):
    backbone.eval()
    optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
    head.train()
    for epoch in range(epochs):
        for images, labels in loader:  # clean
            with torch.no_grad():
                feats = backbone(images)
            loss = F.cross_entropy(head(feats), labels)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
    return head

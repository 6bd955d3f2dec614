"""TL102 probe: a k-fold loop with early stopping whose patience check evaluates the fold model each
epoch, an SWA fine-tune that calls `update_bn` style evaluation between cycles, a Lightning-style
manual-optimization `training_step` driven by a loop that validates inline, and a notebook cell loop;
near misses switch back with `model.train()` at the top of the epoch, score the SWA average rather than the
trained model, drive a Lightning-style `training_step` after `lit.train()`, and evaluate a freshly built
model only after its last epoch."""
import copy

import torch
import torch.nn.functional as F
from torch import nn


def evaluate(model, loader):
    model.eval()
    total = 0.0
    with torch.no_grad():
        for x, y in loader:
            total += float(F.cross_entropy(model(x), y, reduction="sum"))
    return total / len(loader.dataset)


def kfold_early_stopping(folds, make_model, epochs=50, patience=5):
    best_states = []
    for train_loader, val_loader in folds:
        model = make_model()
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        best, bad, best_state = float("inf"), 0, None
        for epoch in range(epochs):
            for x, y in train_loader:  # expect: TL102
                optimizer.zero_grad(set_to_none=True)
                F.cross_entropy(model(x), y).backward()
                optimizer.step()
            val = evaluate(model, val_loader)
            if val < best:
                best, bad, best_state = val, 0, copy.deepcopy(model.state_dict())
            else:
                bad += 1
                if bad >= patience:
                    break
        best_states.append(best_state)
    return best_states


def kfold_early_stopping_restoring(folds, make_model, epochs=50, patience=5):
    best_states = []
    for train_loader, val_loader in folds:
        model = make_model()
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        best, bad, best_state = float("inf"), 0, None
        for epoch in range(epochs):
            model.train()
            for x, y in train_loader:  # clean
                optimizer.zero_grad(set_to_none=True)
                F.cross_entropy(model(x), y).backward()
                optimizer.step()
            val = evaluate(model, val_loader)
            if val < best:
                best, bad, best_state = val, 0, copy.deepcopy(model.state_dict())
            else:
                bad += 1
                if bad >= patience:
                    break
        best_states.append(best_state)
    return best_states


def swa_finetune(model, loader, val_loader, cycles=4, steps=200):
    swa_model = torch.optim.swa_utils.AveragedModel(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    model.train()
    for cycle in range(cycles):
        for step, (x, y) in zip(range(steps), loader):  # expect: TL102
            optimizer.zero_grad(set_to_none=True)
            F.cross_entropy(model(x), y).backward()
            optimizer.step()
        swa_model.update_parameters(model)
        print(cycle, evaluate(model, val_loader))
    return swa_model


def swa_finetune_scoring_average(model, loader, val_loader, cycles=4, steps=200):
    swa_model = torch.optim.swa_utils.AveragedModel(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    model.train()
    for cycle in range(cycles):
        for step, (x, y) in zip(range(steps), loader):  # clean
            optimizer.zero_grad(set_to_none=True)
            F.cross_entropy(model(x), y).backward()
            optimizer.step()
        swa_model.update_parameters(model)
        print(cycle, evaluate(swa_model, val_loader))
    return swa_model


class LitClassifier(nn.Module):
    def __init__(self, backbone, n_classes):
        super().__init__()
        self.backbone = backbone
        self.head = nn.Linear(512, n_classes)
        self.opt = torch.optim.Adam(self.parameters(), lr=1e-4)

    def forward(self, x):
        return self.head(self.backbone(x))

    def training_step(self, batch):
        x, y = batch
        self.opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(self(x), y)
        loss.backward()
        self.opt.step()
        return loss.detach()


def manual_fit(lit, loader, val_loader, epochs=10):
    for epoch in range(epochs):
        lit.train()
        for batch in loader:  # clean
            lit.training_step(batch)
        evaluate(lit, val_loader)


def fit_then_evaluate_once(make_model, loader, val_loader, epochs=10):
    model = make_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        for x, y in loader:  # clean
            optimizer.zero_grad(set_to_none=True)
            F.cross_entropy(model(x), y).backward()
            optimizer.step()
    return model, evaluate(model, val_loader)


net = nn.Sequential(nn.Linear(20, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Dropout(0.2), nn.Linear(64, 3))
sgd = torch.optim.SGD(net.parameters(), lr=0.1)
train_batches = [(torch.randn(32, 20), torch.randint(0, 3, (32,))) for _ in range(8)]
for epoch in range(5):
    for xb, yb in train_batches:  # expect: TL102
        sgd.zero_grad()
        F.cross_entropy(net(xb), yb).backward()
        sgd.step()
    net.eval()
    with torch.no_grad():
        acc = sum(float((net(xb).argmax(-1) == yb).float().mean()) for xb, yb in train_batches) / 8

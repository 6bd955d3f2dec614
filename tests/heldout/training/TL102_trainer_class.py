"""TL102 probe: a trainer class whose evaluate() switches `self.model` to eval mode between the training
passes of fit() and nothing switches it back, an epoch loop that sets train mode only once before the first
validation; near misses are a subclass that switches back, a frozen backbone run under no_grad, and a
distillation loop with a frozen teacher."""
import torch
from torch import nn
import torch.nn.functional as F


class TabularTrainer:
    def __init__(self, model: nn.Module, train_loader, val_loader, lr=1e-3):
        self.model = model
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)

    @torch.no_grad()
    def evaluate(self):
        self.model.eval()
        se, n = 0.0, 0
        for x_num, x_cat, y in self.val_loader:
            se += F.mse_loss(self.model(x_num, x_cat), y, reduction="sum")
            n += y.numel()
        return se / n

    def train_one_epoch(self):
        for x_num, x_cat, y in self.train_loader:  # expect: TL102
            loss = F.mse_loss(self.model(x_num, x_cat), y)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            self.optimizer.step()

    def fit(self, epochs):
        history = []
        for epoch in range(epochs):
            self.train_one_epoch()
            history.append(self.evaluate())
        return history


class TabularTrainerFixed(TabularTrainer):
    def train_one_epoch(self):
        self.model.train()
        for x_num, x_cat, y in self.train_loader:  # clean
            loss = F.mse_loss(self.model(x_num, x_cat), y)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            self.optimizer.step()


class FrozenBackboneTrainer:
    def __init__(self, backbone, head, loader):
        self.backbone = backbone
        self.head = head
        self.loader = loader
        self.optimizer = torch.optim.SGD(head.parameters(), lr=0.01)

    def fit(self):
        self.backbone.eval()
        for x, y in self.loader:  # clean
            with torch.no_grad():
                feats = self.backbone(x)
            loss = F.cross_entropy(self.head(feats), y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()


def fit_with_early_stopping(model, optimizer, train_loader, val_loader, epochs, patience=5):
    best, bad_epochs = float("inf"), 0
    model.train()
    for epoch in range(epochs):
        for x, y in train_loader:  # expect: TL102
            loss = F.l1_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            val = sum(F.l1_loss(model(x), y, reduction="sum") for x, y in val_loader)
        if val < best:
            best, bad_epochs = val, 0
        else:
            bad_epochs += 1
            if bad_epochs >= patience:
                break


def distill(student, teacher, optimizer, loader, epochs, T=2.0):
    teacher.eval()
    student.train()
    for epoch in range(epochs):
        for x, _ in loader:  # clean
            with torch.no_grad():
                soft = F.softmax(teacher(x) / T, dim=-1)
            loss = F.kl_div(F.log_softmax(student(x) / T, dim=-1), soft, reduction="batchmean") * T * T
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()

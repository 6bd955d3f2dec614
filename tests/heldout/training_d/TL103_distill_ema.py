"""TL103 probe: an EMA copy made with `copy.deepcopy(model)` during training (so it is in train mode)
scored by an `@torch.inference_mode()` helper without `.eval()`, a k-fold out-of-fold `predict_fold` helper under
`@torch.no_grad()`, and an evaluation helper called from the training loop; near misses: a frozen
teacher switched to eval once before distillation and run under no_grad inside the training step, a
Lightning `validation_step` (Lightning switches modes itself), and a helper whose every caller ran a
function of the file that leaves the model in eval mode."""
import copy

import pytorch_lightning as pl
import torch
from torch import nn
import torch.nn.functional as F


class StudentNet(nn.Module):
    def __init__(self, n_classes=100):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
            nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2),
        )
        self.head = nn.Linear(64, n_classes)

    def forward(self, x):
        return self.head(self.features(x))


def distill(student, teacher, loader, epochs=10, tau=4.0):
    teacher.eval()
    optimizer = torch.optim.SGD(student.parameters(), lr=0.05, momentum=0.9)
    ema = copy.deepcopy(student)
    student.train()
    for epoch in range(epochs):
        for images, labels in loader:
            with torch.no_grad():
                t_logits = teacher(images)  # clean
            s_logits = student(images)
            kd = F.kl_div(F.log_softmax(s_logits / tau, dim=-1), F.softmax(t_logits / tau, dim=-1),
                          reduction="batchmean") * tau * tau
            loss = 0.9 * kd + 0.1 * F.cross_entropy(s_logits, labels)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            with torch.no_grad():
                for e, p in zip(ema.parameters(), student.parameters()):
                    e.mul_(0.999).add_(p, alpha=0.001)
        print(epoch, ema_accuracy(ema, loader))
    return ema


@torch.inference_mode()
def ema_accuracy(ema_model, loader):
    hits = n = 0
    for images, labels in loader:
        hits += (ema_model(images).argmax(-1) == labels).sum()  # expect: TL103
        n += labels.numel()
    return hits / n


@torch.no_grad()
def predict_fold(model, loader):
    return torch.cat([model(x).softmax(dim=-1) for x, _ in loader])  # expect: TL103


def score_validation(model, loader):
    hits = n = 0
    with torch.no_grad():
        for x, y in loader:
            hits += (model(x).argmax(-1) == y).sum()  # expect: TL103
            n += y.numel()
    return hits / n


def train(model, train_loader, val_loader, epochs):
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for epoch in range(epochs):
        model.train()
        for x, y in train_loader:
            optimizer.zero_grad(set_to_none=True)
            F.cross_entropy(model(x), y).backward()
            optimizer.step()
        print(epoch, score_validation(model, val_loader))


def load_frozen(path):
    model = StudentNet()
    model.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
    model.eval()
    return model


@torch.no_grad()
def top5(model, images):
    return model(images).topk(5, dim=-1).indices  # clean


def report(path, images):
    model = load_frozen(path)
    return top5(model, images)


class LitStudent(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.model = StudentNet()

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self.model(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self.model(x)  # clean
        self.log("val_acc", (logits.argmax(-1) == y).float().mean())

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-3)

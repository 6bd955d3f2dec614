"""TL402 probe: a student moved to the GPU on every step of a `while` distillation loop and
a loss module moved inside a nested helper's loop, against moving each teacher of an ensemble
once and a fresh model per cross-validation fold."""
import torch
import torch.nn as nn
import torch.nn.functional as F

device = "cuda" if torch.cuda.is_available() else "cpu"


def build_model(num_classes=10):
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, num_classes))


def distill(student, teachers, loader, max_steps=10_000, T=4.0):
    for teacher in teachers:
        teacher.to(device)  # clean
        teacher.eval()
    opt = torch.optim.SGD(student.parameters(), lr=0.05, momentum=0.9)
    step = 0
    batches = iter(loader)
    while step < max_steps:
        student = student.to(device)  # expect: TL402
        student.train()
        try:
            x, _ = next(batches)
        except StopIteration:
            batches = iter(loader)
            x, _ = next(batches)
        x = x.to(device)
        with torch.no_grad():
            soft = torch.stack([F.softmax(t(x) / T, dim=-1) for t in teachers]).mean(0)
        loss = F.kl_div(F.log_softmax(student(x) / T, dim=-1), soft, reduction="batchmean") * T * T
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        step += 1
    return student


def cross_validate(folds, epochs=5):
    def run_fold(model, train_loader):
        criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        model.train()
        for _ in range(epochs):
            for x, y in train_loader:
                criterion = criterion.to(device)  # expect: TL402
                x, y = x.to(device), y.to(device)
                loss = criterion(model(x), y)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
        return model

    scores = []
    for train_loader, val_loader in folds:
        model = build_model().to(device)  # clean
        model = run_fold(model, train_loader)
        model.eval()
        correct = total = 0
        with torch.no_grad():
            for x, y in val_loader:
                pred = model(x.to(device)).argmax(dim=-1)
                correct += (pred == y.to(device)).sum()
                total += y.numel()
        scores.append(correct / total)
    return torch.stack(scores).mean()

"""TL401 probe: a distillation loop and a multi-label training loop on the GPU. The distillation
loop logs `loss.item()` every step and accumulates top-1 agreement with
`(s.argmax(1) == t.argmax(1)).sum().item()`, the multi-label loop converts every batch's
predictions with `.cpu().numpy()` for an F1 computed on the host and keeps `.tolist()` of the
thresholded labels; near misses are a sync under `if step % log_every == 0:`, the detached loss
accumulated on the device and read once per epoch, and the same conversions in an evaluation
function (no training loop)."""
import numpy as np
import torch
import torch.nn.functional as F
from sklearn.metrics import f1_score


def distill_epoch(student, teacher, loader, optimizer, device, T=4.0, log_every=50):
    student.train()
    teacher.eval()
    running = torch.zeros((), device=device)
    agree = 0
    for step, (x, _) in enumerate(loader):
        x = x.to(device, non_blocking=True)
        with torch.no_grad():
            t = teacher(x)
        s = student(x)
        loss = F.kl_div(F.log_softmax(s / T, dim=-1), F.softmax(t / T, dim=-1), reduction="batchmean") * T * T
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item():.4f}")  # expect: TL401
        agree += (s.argmax(1) == t.argmax(1)).sum().item()  # expect: TL401
        running += loss.detach()  # clean
        if step % log_every == 0:
            print("running", running.item() / (step + 1))  # clean
    return running.item() / max(len(loader), 1), agree


def multilabel_epoch(model, loader, optimizer, device):
    model.train()
    all_pred, all_true = [], []
    for images, labels in loader:
        images, labels = images.to(device), labels.to(device)
        logits = model(images)
        loss = F.binary_cross_entropy_with_logits(logits, labels.float())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        all_pred.append((torch.sigmoid(logits) > 0.5).cpu().numpy())  # expect: TL401
        all_true.append(labels.tolist())  # expect: TL401
    return f1_score(np.concatenate(all_true), np.concatenate(all_pred), average="macro")


@torch.no_grad()
def evaluate_multilabel(model, loader, device):
    model.eval()
    preds, trues = [], []
    for images, labels in loader:
        logits = model(images.to(device))
        preds.append((torch.sigmoid(logits) > 0.5).cpu().numpy())  # clean
        trues.append(labels.numpy())  # clean
    return f1_score(np.concatenate(trues), np.concatenate(preds), average="macro")

"""Knowledge distillation on CIFAR-100: a frozen ResNet-50 teacher loaded from a local checkpoint,
a small student trained on a KL term between temperature-softened distributions plus
label-smoothed cross-entropy, under bf16 autocast, with evaluation each epoch."""
import argparse
import logging

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, transforms
from torchvision.models import resnet18, resnet50

log = logging.getLogger("kd")


def kd_loss(s_logits, t_logits, targets, T=4.0, alpha=0.9, smoothing=0.1):
    soft = F.kl_div(F.log_softmax(s_logits / T, dim=-1), F.softmax(t_logits / T, dim=-1),
                    reduction="batchmean") * T * T
    hard = F.cross_entropy(s_logits, targets, label_smoothing=smoothing)
    return alpha * soft + (1 - alpha) * hard


def build_models(teacher_ckpt, num_classes, device):
    teacher = resnet50(weights=None, num_classes=num_classes)
    teacher.load_state_dict(torch.load(teacher_ckpt, map_location="cpu", weights_only=True))
    teacher.requires_grad_(False)
    teacher = teacher.to(device).eval()
    student = resnet18(weights=None, num_classes=num_classes).to(device)
    return teacher, student


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    correct = torch.zeros((), device=device)
    total = 0
    for x, y in loader:
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        correct += (model(x).argmax(1) == y).sum()
        total += y.numel()
    return correct.item() / max(total, 1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="./data")
    p.add_argument("--teacher", required=True)
    p.add_argument("--epochs", type=int, default=200)
    p.add_argument("--bs", type=int, default=128)
    p.add_argument("--workers", type=int, default=8)
    args = p.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    norm = transforms.Normalize((0.507, 0.487, 0.441), (0.267, 0.256, 0.276))
    train_tf = transforms.Compose([transforms.RandomCrop(32, padding=4), transforms.RandomHorizontalFlip(),
                                   transforms.ToTensor(), norm])
    test_tf = transforms.Compose([transforms.ToTensor(), norm])
    train_ds = datasets.CIFAR100(args.data, train=True, download=True, transform=train_tf)
    test_ds = datasets.CIFAR100(args.data, train=False, download=True, transform=test_tf)
    train_loader = DataLoader(train_ds, batch_size=args.bs, shuffle=True, num_workers=args.workers,
                              pin_memory=True, drop_last=True, persistent_workers=True)
    test_loader = DataLoader(test_ds, batch_size=256, num_workers=args.workers, pin_memory=True)

    teacher, student = build_models(args.teacher, 100, device)
    optimizer = torch.optim.SGD(student.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4, nesterov=True)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    best = 0.0
    for epoch in range(args.epochs):
        student.train()
        running = torch.zeros((), device=device)
        for step, (x, y) in enumerate(train_loader):
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            with torch.autocast(device_type=device.type, dtype=torch.bfloat16):
                with torch.no_grad():
                    t_logits = teacher(x)
                loss = kd_loss(student(x), t_logits, y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            running += loss.detach()
            if step % 100 == 0:
                log.info("epoch %d step %d loss %.4f", epoch, step, running.item() / (step + 1))
        scheduler.step()
        acc = evaluate(student, test_loader, device)
        log.info("epoch %d acc %.4f", epoch, acc)
        if acc > best:
            best = acc
            torch.save({"model": student.state_dict(), "epoch": epoch, "acc": acc}, "student_best.pt")


if __name__ == "__main__":
    main()

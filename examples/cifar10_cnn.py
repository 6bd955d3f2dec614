"""Train a small ResNet-style CNN on CIFAR-10 and keep the best checkpoint.

Usage: python cifar10_cnn.py --epochs 30 --batch-size 128 --out runs/cifar
"""
import argparse
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

CIFAR_MEAN = (0.4914, 0.4822, 0.4465)
CIFAR_STD = (0.2470, 0.2435, 0.2616)


class BasicBlock(nn.Module):
    def __init__(self, in_ch, out_ch, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_ch, out_ch, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_ch)
        self.conv2 = nn.Conv2d(out_ch, out_ch, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_ch)
        self.shortcut = nn.Sequential()
        if stride != 1 or in_ch != out_ch:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_ch, out_ch, 1, stride=stride, bias=False),
                nn.BatchNorm2d(out_ch),
            )

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class SmallResNet(nn.Module):
    def __init__(self, num_classes=10, width=64):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, width, 3, padding=1, bias=False),
            nn.BatchNorm2d(width),
            nn.ReLU(inplace=True),
        )
        self.layer1 = nn.Sequential(BasicBlock(width, width), BasicBlock(width, width))
        self.layer2 = nn.Sequential(BasicBlock(width, 2 * width, 2), BasicBlock(2 * width, 2 * width))
        self.layer3 = nn.Sequential(BasicBlock(2 * width, 4 * width, 2), BasicBlock(4 * width, 4 * width))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.dropout = nn.Dropout(0.2)
        self.fc = nn.Linear(4 * width, num_classes)

    def forward(self, x):
        x = self.layer3(self.layer2(self.layer1(self.stem(x))))
        x = torch.flatten(self.pool(x), 1)
        return self.fc(self.dropout(x))


def build_loaders(data_dir, batch_size):
    train_tf = transforms.Compose([
        transforms.RandomCrop(32, padding=4),
        transforms.RandomHorizontalFlip(),
        transforms.ToTensor(),
        transforms.Normalize(CIFAR_MEAN, CIFAR_STD),
    ])
    test_tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize(CIFAR_MEAN, CIFAR_STD)])
    train_set = datasets.CIFAR10(data_dir, train=True, download=True, transform=train_tf)
    test_set = datasets.CIFAR10(data_dir, train=False, download=True, transform=test_tf)
    # Mistake: no num_workers and no pin_memory, so the GPU waits on the main process (TL405).
    train_loader = DataLoader(train_set, batch_size=batch_size, shuffle=True, drop_last=True)
    test_loader = DataLoader(test_set, batch_size=2 * batch_size, num_workers=4, pin_memory=True)
    return train_loader, test_loader


def train_one_epoch(model, loader, criterion, optimizer, device, epoch, log_every=100):
    # Mistake: no model.train() here, but validate() below calls model.eval() every
    # epoch, so from epoch 2 on dropout and batch norm stay in eval mode (TL102).
    running_loss = 0.0
    correct = total = 0
    start = time.time()
    for step, (images, labels) in enumerate(loader):
        # Mistake: the model is moved again on every step (TL402).
        model.to(device)
        images, labels = images.to(device, non_blocking=True), labels.to(device, non_blocking=True)
        outputs = model(images)
        loss = criterion(outputs, labels)

        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

        # Mistake: .item() forces a host-device sync on every step (TL401).
        running_loss += loss.item()
        correct += (outputs.argmax(dim=1) == labels).sum()
        total += labels.size(0)
        if step % log_every == 0:
            elapsed = time.time() - start
            print(f"epoch {epoch} step {step}/{len(loader)} loss {loss.item():.4f} ({elapsed:.1f}s)")
    return running_loss / len(loader), correct.float() / total


def validate(model, loader, criterion, device):
    model.eval()
    total_loss = 0.0
    correct = total = 0
    # Mistake: no torch.no_grad(), so every batch builds a graph nobody uses (TL302).
    for images, labels in loader:
        images, labels = images.to(device), labels.to(device)
        outputs = model(images)
        total_loss += criterion(outputs, labels).item() * labels.size(0)
        correct += (outputs.argmax(dim=1) == labels).sum().item()
        total += labels.size(0)
    return total_loss / total, correct / total


def save_checkpoint(model, optimizer, epoch, acc, path):
    state = model.module.state_dict() if hasattr(model, "module") else model.state_dict()
    torch.save({"model": state, "optimizer": optimizer.state_dict(), "epoch": epoch, "acc": acc}, path)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default="./data")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--weight-decay", type=float, default=5e-4)
    parser.add_argument("--out", default="runs/cifar")
    return parser.parse_args()


def main():
    args = parse_args()
    os.makedirs(args.out, exist_ok=True)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_loader, test_loader = build_loaders(args.data, args.batch_size)

    model = SmallResNet()
    if torch.cuda.device_count() > 1:
        # Mistake: DataParallel is single-process and slower than DDP (TL406).
        model = nn.DataParallel(model)
    model = model.to(device)

    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9,
                                weight_decay=args.weight_decay, nesterov=True)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)

    best_acc = 0.0
    for epoch in range(args.epochs):
        train_loss, train_acc = train_one_epoch(model, train_loader, criterion, optimizer, device, epoch)
        val_loss, val_acc = validate(model, test_loader, criterion, device)
        scheduler.step()
        print(f"epoch {epoch}: train loss {train_loss:.4f} acc {train_acc:.3f} | "
              f"val loss {val_loss:.4f} acc {val_acc:.3f} | lr {scheduler.get_last_lr()[0]:.4f}")
        if val_acc > best_acc:
            best_acc = val_acc
            save_checkpoint(model, optimizer, epoch, val_acc, os.path.join(args.out, "best.pt"))
    print(f"best val acc {best_acc:.3f}")


if __name__ == "__main__":
    main()

"""Fine-tune an image classifier with DDP, gradient accumulation (no_sync on the micro-batches that
do not step), a warmup + cosine schedule, inline validation every few hundred steps, an EMA copy,
and early stopping on the validation loss."""
import argparse
import contextlib
import copy
import math
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
from torchvision import datasets, transforms


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="data/")
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--accum", type=int, default=4)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--patience", type=int, default=4)
    p.add_argument("--eval-every", type=int, default=500)
    return p.parse_args()


def build_model(n_classes):
    return nn.Sequential(
        nn.Conv2d(3, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
        nn.Conv2d(64, 128, 3, stride=2, padding=1), nn.BatchNorm2d(128), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2), nn.Linear(128, n_classes),
    )


@torch.no_grad()
def ema_update(ema, model, decay):
    for e, p in zip(ema.parameters(), model.parameters()):
        e.lerp_(p, 1 - decay)
    for e, b in zip(ema.buffers(), model.buffers()):
        e.copy_(b)


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    total, n = torch.zeros((), device=device), 0
    for x, y in loader:
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        total += F.cross_entropy(model(x), y, reduction="sum")
        n += y.numel()
    return total.item() / max(n, 1)


def main():
    args = parse_args()
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", rank)
    torch.cuda.set_device(device)

    tf = transforms.Compose([transforms.RandomCrop(32, padding=4), transforms.RandomHorizontalFlip(), transforms.ToTensor()])
    train_set = datasets.CIFAR10(args.data, train=True, download=rank == 0, transform=tf)
    val_set = datasets.CIFAR10(args.data, train=False, transform=transforms.ToTensor())
    sampler = DistributedSampler(train_set, shuffle=True)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=sampler, num_workers=8,
                              pin_memory=True, drop_last=True, persistent_workers=True)
    val_loader = DataLoader(val_set, batch_size=256, num_workers=4, pin_memory=True)

    model = build_model(10).to(device)
    ema = copy.deepcopy(model).requires_grad_(False)
    ddp = DDP(model, device_ids=[rank])
    optimizer = torch.optim.AdamW(ddp.parameters(), lr=args.lr, weight_decay=0.05)
    steps_per_epoch = len(train_loader) // args.accum
    total = args.epochs * steps_per_epoch
    warmup = min(1000, total // 10)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: (s + 1) / warmup if s < warmup else 0.5 * (1 + math.cos(math.pi * (s - warmup) / (total - warmup))))

    best, bad, step = float("inf"), 0, 0
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        ddp.train()
        optimizer.zero_grad(set_to_none=True)
        for i, (x, y) in enumerate(train_loader):
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            boundary = (i + 1) % args.accum == 0
            with contextlib.nullcontext() if boundary else ddp.no_sync():
                loss = F.cross_entropy(ddp(x), y, label_smoothing=0.1) / args.accum
                loss.backward()
            if not boundary:
                continue
            torch.nn.utils.clip_grad_norm_(ddp.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            ema_update(ema, model, decay=0.999)
            step += 1
            if step % args.eval_every == 0 and rank == 0:
                print(f"step {step} loss {loss.item() * args.accum:.4f} ema-val {evaluate(ema, val_loader, device):.4f}")
                ddp.train()

        val = evaluate(ema, val_loader, device)
        if rank == 0:
            print(f"epoch {epoch} val {val:.4f}")
        if val < best:
            best, bad = val, 0
            if rank == 0:
                torch.save({"model": model.state_dict(), "ema": ema.state_dict(), "epoch": epoch}, "best.pt")
        else:
            bad += 1
            if bad >= args.patience:
                break
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

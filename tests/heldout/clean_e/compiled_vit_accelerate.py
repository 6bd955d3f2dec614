"""Clean: fine-tuning a ViT classifier with accelerate, a compiled model, activation
checkpointing with `use_reentrant=False`, periodic logging, a held-out evaluation under
`inference_mode` and a resume from a weights-only checkpoint."""
import argparse
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from accelerate import Accelerator
from torch.utils.checkpoint import checkpoint
from torch.utils.data import DataLoader
from torchvision import datasets
from torchvision.transforms import v2


class Block(nn.Module):
    def __init__(self, dim, heads, mlp_ratio=4.0, drop=0.1):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, dropout=drop, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, int(dim * mlp_ratio)), nn.GELU(), nn.Dropout(drop),
                                 nn.Linear(int(dim * mlp_ratio), dim))

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class ViT(nn.Module):
    def __init__(self, image_size=224, patch=16, dim=384, depth=12, heads=6, n_classes=100, grad_ckpt=True):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, dim, patch, stride=patch)
        n_patches = (image_size // patch) ** 2
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos = nn.Parameter(torch.zeros(1, n_patches + 1, dim))
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(depth))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, n_classes)
        self.grad_ckpt = grad_ckpt
        nn.init.trunc_normal_(self.pos, std=0.02)

    def forward(self, images):
        x = self.patch_embed(images).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.size(0), -1, -1), x], dim=1) + self.pos
        for block in self.blocks:
            if self.grad_ckpt and self.training:
                x = checkpoint(block, x, use_reentrant=False)
            else:
                x = block(x)
        return self.head(self.norm(x[:, 0]))


def cosine_lr(step, total, warmup, base):
    if step < warmup:
        return base * step / max(1, warmup)
    return 0.5 * base * (1 + math.cos(math.pi * (step - warmup) / max(1, total - warmup)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="./data")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--bs", type=int, default=128)
    parser.add_argument("--lr", type=float, default=5e-4)
    parser.add_argument("--resume", default=None)
    parser.add_argument("--log-every", type=int, default=50)
    args = parser.parse_args()

    accelerator = Accelerator(mixed_precision="bf16", gradient_accumulation_steps=2)
    tf = v2.Compose([v2.ToImage(), v2.RandomResizedCrop(224, antialias=True), v2.RandomHorizontalFlip(),
                     v2.ToDtype(torch.float32, scale=True)])
    eval_tf = v2.Compose([v2.ToImage(), v2.Resize(256, antialias=True), v2.CenterCrop(224),
                          v2.ToDtype(torch.float32, scale=True)])
    train_ds = datasets.CIFAR100(args.data, train=True, download=True, transform=tf)
    val_ds = datasets.CIFAR100(args.data, train=False, download=True, transform=eval_tf)
    workers = min(8, os.cpu_count() or 1)
    train_loader = DataLoader(train_ds, batch_size=args.bs, shuffle=True, num_workers=workers, pin_memory=True,
                              drop_last=True, persistent_workers=True)
    val_loader = DataLoader(val_ds, batch_size=2 * args.bs, num_workers=workers, pin_memory=True)

    model = ViT()
    if args.resume:
        state = torch.load(args.resume, map_location="cpu", weights_only=True)
        result = model.load_state_dict(state, strict=False)
        accelerator.print("missing", result.missing_keys, "unexpected", result.unexpected_keys)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.05)
    model, optimizer, train_loader, val_loader = accelerator.prepare(model, optimizer, train_loader, val_loader)
    model = torch.compile(model)

    total = args.epochs * len(train_loader)
    step = 0
    for epoch in range(args.epochs):
        model.train()
        running = torch.zeros((), device=accelerator.device)
        for images, labels in train_loader:
            with accelerator.accumulate(model):
                logits = model(images)
                loss = F.cross_entropy(logits, labels, label_smoothing=0.1)
                accelerator.backward(loss)
                if accelerator.sync_gradients:
                    accelerator.clip_grad_norm_(model.parameters(), 1.0)
                for group in optimizer.param_groups:
                    group["lr"] = cosine_lr(step, total, 500, args.lr)
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
            running += loss.detach()
            step += 1
            if step % args.log_every == 0:
                accelerator.print(f"epoch {epoch} step {step} loss {running.item() / args.log_every:.4f}")
                running.zero_()

        model.eval()
        correct = torch.zeros((), device=accelerator.device)
        seen = 0
        with torch.inference_mode():
            for images, labels in val_loader:
                probs = F.softmax(model(images), dim=-1)
                preds, labels = accelerator.gather_for_metrics((probs.argmax(-1), labels))
                correct += (preds == labels).sum()
                seen += labels.numel()
        accelerator.print(f"epoch {epoch}: val acc {correct.item() / seen:.4f}")
        accelerator.save(accelerator.unwrap_model(model).state_dict(), f"vit_epoch{epoch}.pt")


if __name__ == "__main__":
    main()

"""Clean script: fine-tune a small GPT-style language model with `torch.compile`, bf16 autocast,
gradient accumulation, a warmup-cosine schedule, periodic logging and evaluation, and
resumable checkpoints loaded with `weights_only=True`. No rule may fire."""
import argparse
import math
import os
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, heads, dropout):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.heads = heads
        self.dropout = dropout

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=self.dropout if self.training else 0.0)
        return self.proj(y.transpose(1, 2).contiguous().view(b, t, d))


class Block(nn.Module):
    def __init__(self, dim, heads, dropout):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = CausalSelfAttention(dim, heads, dropout)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim), nn.Dropout(dropout))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab=50304, block=256, dim=384, depth=6, heads=6, dropout=0.1):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(block, dim)
        self.blocks = nn.ModuleList([Block(dim, heads, dropout) for _ in range(depth)])
        self.ln_f = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.tok.weight

    def forward(self, idx):
        pos = torch.arange(idx.size(1), device=idx.device)
        x = self.tok(idx) + self.pos(pos)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln_f(x))


def get_batch(data, block, batch_size, device):
    ix = torch.randint(len(data) - block - 1, (batch_size,))
    x = torch.stack([torch.from_numpy(data[i:i + block].astype(np.int64)) for i in ix])
    y = torch.stack([torch.from_numpy(data[i + 1:i + 1 + block].astype(np.int64)) for i in ix])
    return x.pin_memory().to(device, non_blocking=True), y.pin_memory().to(device, non_blocking=True)


def lr_at(step, warmup, total, base_lr, min_lr):
    if step < warmup:
        return base_lr * (step + 1) / warmup
    progress = min(1.0, (step - warmup) / max(1, total - warmup))
    return min_lr + 0.5 * (base_lr - min_lr) * (1 + math.cos(math.pi * progress))


@torch.no_grad()
def estimate_loss(model, data, args, device):
    model.eval()
    losses = torch.zeros(args.eval_iters)
    for k in range(args.eval_iters):
        x, y = get_batch(data, args.block, args.batch_size, device)
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            logits = model(x)
        losses[k] = F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1)).item()
    model.train()
    return losses.mean().item()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data-dir", default="data/openwebtext")
    p.add_argument("--out-dir", default="out")
    p.add_argument("--block", type=int, default=256)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--accum", type=int, default=4)
    p.add_argument("--steps", type=int, default=5000)
    p.add_argument("--lr", type=float, default=6e-4)
    p.add_argument("--eval-every", type=int, default=250)
    p.add_argument("--eval-iters", type=int, default=50)
    p.add_argument("--log-every", type=int, default=20)
    p.add_argument("--resume", action="store_true")
    args = p.parse_args()

    device = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = True
    train_data = np.memmap(os.path.join(args.data_dir, "train.bin"), dtype=np.uint16, mode="r")
    val_data = np.memmap(os.path.join(args.data_dir, "val.bin"), dtype=np.uint16, mode="r")

    model = GPT(block=args.block).to(device)
    decay = [p_ for n, p_ in model.named_parameters() if p_.dim() >= 2]
    no_decay = [p_ for n, p_ in model.named_parameters() if p_.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                                  lr=args.lr, betas=(0.9, 0.95), fused=True)
    start_step, best_val = 0, float("inf")
    ckpt_path = os.path.join(args.out_dir, "ckpt.pt")
    if args.resume and os.path.exists(ckpt_path):
        ckpt = torch.load(ckpt_path, map_location=device, weights_only=True)
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        start_step, best_val = ckpt["step"], ckpt["best_val"]
    compiled = torch.compile(model)

    compiled.train()
    t0 = time.time()
    for step in range(start_step, args.steps):
        for group in optimizer.param_groups:
            group["lr"] = lr_at(step, 200, args.steps, args.lr, args.lr / 10)
        for micro in range(args.accum):
            x, y = get_batch(train_data, args.block, args.batch_size, device)
            with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
                logits = compiled(x)
                loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1)) / args.accum
            loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

        if step % args.log_every == 0:
            dt, t0 = time.time() - t0, time.time()
            print(f"step {step}: loss {loss.item() * args.accum:.4f} ({dt * 1000 / args.log_every:.0f} ms/step)")
        if step % args.eval_every == 0 and step > 0:
            val = estimate_loss(compiled, val_data, args, device)
            print(f"step {step}: val loss {val:.4f}")
            if val < best_val:
                best_val = val
                os.makedirs(args.out_dir, exist_ok=True)
                torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                            "step": step, "best_val": best_val}, ckpt_path)


if __name__ == "__main__":
    main()

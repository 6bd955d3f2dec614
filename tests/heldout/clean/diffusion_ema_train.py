"""Clean script: denoising-diffusion training on image crops with an EMA copy, bf16 autocast, gradient
accumulation, cosine LR with warm-up, checkpoint resume and periodic sampling from the EMA model."""
import argparse
import copy
import math
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, transforms


def timestep_embedding(t, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, device=t.device, dtype=torch.float32) / half)
    args = t.float()[:, None] * freqs[None]
    return torch.cat([args.sin(), args.cos()], dim=-1)


class ResBlock(nn.Module):
    def __init__(self, channels, t_dim):
        super().__init__()
        self.norm1 = nn.GroupNorm(8, channels)
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.t_proj = nn.Linear(t_dim, channels)
        self.norm2 = nn.GroupNorm(8, channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x, t_emb):
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.t_proj(t_emb)[:, :, None, None]
        return x + self.conv2(F.silu(self.norm2(h)))


class TinyUNet(nn.Module):
    def __init__(self, channels=64, t_dim=128):
        super().__init__()
        self.t_dim = t_dim
        self.t_mlp = nn.Sequential(nn.Linear(t_dim, t_dim), nn.SiLU(), nn.Linear(t_dim, t_dim))
        self.inp = nn.Conv2d(3, channels, 3, padding=1)
        self.down = nn.Conv2d(channels, channels, 4, stride=2, padding=1)
        self.mid = ResBlock(channels, t_dim)
        self.up = nn.ConvTranspose2d(channels, channels, 4, stride=2, padding=1)
        self.out = nn.Conv2d(2 * channels, 3, 3, padding=1)

    def forward(self, x, t):
        t_emb = self.t_mlp(timestep_embedding(t, self.t_dim))
        h0 = self.inp(x)
        h = self.up(self.mid(self.down(h0), t_emb))
        return self.out(torch.cat([h, h0], dim=1))


class Diffusion:
    def __init__(self, steps=1000, device="cpu"):
        self.steps = steps
        betas = torch.linspace(1e-4, 0.02, steps, device=device)
        self.alpha_bar = torch.cumprod(1.0 - betas, dim=0)
        self.betas = betas

    def q_sample(self, x0, t, noise):
        ab = self.alpha_bar[t][:, None, None, None]
        return ab.sqrt() * x0 + (1 - ab).sqrt() * noise

    @torch.inference_mode()
    def sample(self, model, n, size, device):
        model.eval()
        x = torch.randn(n, 3, size, size, device=device)
        for i in reversed(range(self.steps)):
            t = torch.full((n,), i, device=device, dtype=torch.long)
            eps = model(x, t)
            ab, beta = self.alpha_bar[i], self.betas[i]
            x = (x - beta * (1 - ab).rsqrt() * eps) * (1 - beta).rsqrt()
            if i > 0:
                x = x + beta.sqrt() * torch.randn_like(x)
        return x.clamp(-1, 1)


@torch.no_grad()
def update_ema(ema, model, decay=0.999):
    for e, p in zip(ema.parameters(), model.parameters()):
        e.lerp_(p, 1 - decay)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("data", type=Path)
    parser.add_argument("--out", type=Path, default=Path("runs/ddpm"))
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--accum", type=int, default=2)
    parser.add_argument("--resume", type=Path)
    args = parser.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    tf = transforms.Compose([transforms.RandomResizedCrop(64), transforms.RandomHorizontalFlip(),
                             transforms.ToTensor(), transforms.Normalize([0.5] * 3, [0.5] * 3)])
    loader = DataLoader(datasets.ImageFolder(args.data, tf), batch_size=args.batch_size, shuffle=True,
                        num_workers=8, pin_memory=True, drop_last=True, persistent_workers=True)
    model = TinyUNet().to(device)
    ema = copy.deepcopy(model).requires_grad_(False)
    diffusion = Diffusion(device=device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-4, weight_decay=0.0)
    warmup = 1000
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min(1.0, (s + 1) / warmup) * 0.5 * (1 + math.cos(math.pi * min(s, args.steps) / args.steps)))
    step = 0
    if args.resume:
        ckpt = torch.load(args.resume, map_location="cpu", weights_only=True)
        model.load_state_dict(ckpt["model"])
        ema.load_state_dict(ckpt["ema"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scheduler.load_state_dict(ckpt["scheduler"])
        step = ckpt["step"]

    args.out.mkdir(parents=True, exist_ok=True)
    model.train()
    data = iter(loader)
    while step < args.steps:
        optimizer.zero_grad(set_to_none=True)
        for _ in range(args.accum):
            try:
                x0, _ = next(data)
            except StopIteration:
                data = iter(loader)
                x0, _ = next(data)
            x0 = x0.to(device, non_blocking=True)
            t = torch.randint(0, diffusion.steps, (x0.size(0),), device=device)
            noise = torch.randn_like(x0)
            with torch.autocast(device_type=device.type, dtype=torch.bfloat16):
                loss = F.mse_loss(model(diffusion.q_sample(x0, t, noise), t), noise) / args.accum
            loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        update_ema(ema, model)
        step += 1
        if step % 5000 == 0:
            samples = diffusion.sample(ema, 16, 64, device)
            torch.save(samples.cpu(), args.out / f"samples_{step}.pt")
            torch.save({"model": model.state_dict(), "ema": ema.state_dict(), "optimizer": optimizer.state_dict(),
                        "scheduler": scheduler.state_dict(), "step": step}, args.out / "last.pt")


if __name__ == "__main__":
    main()

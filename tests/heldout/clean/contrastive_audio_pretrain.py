"""Clean script: SimCLR-style contrastive pretraining of an audio encoder (AMP, GradScaler, gradient
accumulation, warm-up + cosine schedule, periodic logging, linear-probe evaluation, checkpointing)."""
import argparse
import math
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchaudio
from torch.utils.data import DataLoader, Dataset


class ClipPairs(Dataset):
    """Two random crops of the same clip, as log-mel spectrograms."""

    def __init__(self, files, sample_rate=16000, crop_seconds=2.0):
        self.files = list(files)
        self.crop = int(sample_rate * crop_seconds)
        self.mel = torchaudio.transforms.MelSpectrogram(sample_rate, n_fft=400, hop_length=160, n_mels=64)

    def __len__(self):
        return len(self.files)

    def _random_crop(self, wave):
        if wave.size(-1) <= self.crop:
            return F.pad(wave, (0, self.crop - wave.size(-1)))
        start = int(torch.randint(0, wave.size(-1) - self.crop, ()))
        return wave[..., start: start + self.crop]

    def __getitem__(self, idx):
        wave, _ = torchaudio.load(self.files[idx])
        wave = wave.mean(dim=0, keepdim=True)
        views = [self.mel(self._random_crop(wave)).clamp_min(1e-5).log() for _ in range(2)]
        return views[0], views[1]


class AudioEncoder(nn.Module):
    def __init__(self, dim=256, proj_dim=128):
        super().__init__()
        blocks, channels = [], 1
        for out_channels in (32, 64, 128, 256):
            blocks += [nn.Conv2d(channels, out_channels, 3, padding=1), nn.BatchNorm2d(out_channels), nn.GELU(),
                       nn.MaxPool2d(2)]
            channels = out_channels
        self.features = nn.Sequential(*blocks, nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.embed = nn.Linear(channels, dim)
        self.projector = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, proj_dim))

    def forward(self, mel, project=True):
        h = self.embed(self.features(mel))
        return self.projector(h) if project else h


def nt_xent(z1, z2, temperature=0.1):
    z = F.normalize(torch.cat([z1, z2]), dim=-1)
    sim = z @ z.T / temperature
    n = z1.size(0)
    sim = sim.masked_fill(torch.eye(2 * n, dtype=torch.bool, device=z.device), float("-inf"))
    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)]).to(z.device)
    return F.cross_entropy(sim, targets)


def lr_lambda(warmup, total):
    def schedule(step):
        if step < warmup:
            return (step + 1) / warmup
        progress = (step - warmup) / max(1, total - warmup)
        return 0.5 * (1 + math.cos(math.pi * progress))
    return schedule


def pretrain(model, loader, device, epochs, accum_steps, log_every=50):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
    total_updates = epochs * len(loader) // accum_steps
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda(500, total_updates))
    scaler = torch.amp.GradScaler(device.type, enabled=device.type == "cuda")
    running = torch.zeros((), device=device)
    for epoch in range(epochs):
        model.train()
        optimizer.zero_grad(set_to_none=True)
        for step, (a, b) in enumerate(loader):
            a, b = a.to(device, non_blocking=True), b.to(device, non_blocking=True)
            with torch.autocast(device_type=device.type, dtype=torch.float16, enabled=device.type == "cuda"):
                loss = nt_xent(model(a), model(b)) / accum_steps
            scaler.scale(loss).backward()
            running += loss.detach()
            if (step + 1) % accum_steps == 0:
                scaler.unscale_(optimizer)
                nn.utils.clip_grad_norm_(model.parameters(), 3.0)
                scaler.step(optimizer)
                scaler.update()
                scheduler.step()
                optimizer.zero_grad(set_to_none=True)
            if step % log_every == 0:
                print(f"epoch {epoch} step {step}: loss {running.item() / (step + 1):.4f}")
        running.zero_()


@torch.inference_mode()
def embed_all(model, loader, device):
    model.eval()
    feats, labels = [], []
    for mel, y in loader:
        feats.append(model(mel.to(device, non_blocking=True), project=False).float().cpu())
        labels.append(y)
    return torch.cat(feats), torch.cat(labels)


def linear_probe(train_x, train_y, test_x, test_y, n_classes, epochs=100):
    probe = nn.Linear(train_x.size(1), n_classes)
    optimizer = torch.optim.LBFGS(probe.parameters(), lr=0.5, max_iter=20)

    def closure():
        optimizer.zero_grad()
        loss = F.cross_entropy(probe(train_x), train_y)
        loss.backward()
        return loss

    for _ in range(epochs // 20):
        optimizer.step(closure)
    with torch.no_grad():
        return (probe(test_x).argmax(dim=1) == test_y).float().mean()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("root", type=Path)
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--accum-steps", type=int, default=2)
    parser.add_argument("--workers", type=int, default=8)
    args = parser.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    files = sorted(args.root.glob("**/*.wav"))
    loader = DataLoader(ClipPairs(files), batch_size=args.batch_size, shuffle=True, drop_last=True,
                        num_workers=args.workers, pin_memory=True, persistent_workers=True)
    model = AudioEncoder().to(device)
    pretrain(model, loader, device, args.epochs, args.accum_steps)
    torch.save({"model": model.state_dict(), "epochs": args.epochs}, args.root / "encoder.pt")


if __name__ == "__main__":
    main()

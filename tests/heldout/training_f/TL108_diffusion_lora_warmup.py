"""TL108 probe: a mixed-precision diffusion fine-tuning loop with gradient accumulation that steps the
cosine warm-up before `scaler.step(optimizer)` inside the accumulation branch, a LoRA trainer class that
steps `self.scheduler` at the top of each step of a `while` loop, and a k-fold tabular MLP stepping a
`OneCycleLR` before its optimizer; near misses step the scheduler after the optimizer, step an EMA helper
and a noise scheduler (`noise_scheduler.step(...)` is a diffusion sampler, not an LR schedule) first, and
step `ReduceLROnPlateau` once per epoch after validation. (The sampler, run under no_grad with the UNet
never put in eval mode, is an evaluation context: TL103.)"""
import torch
import torch.nn.functional as F
from torch import nn
from transformers import get_cosine_schedule_with_warmup


def finetune_unet(unet, loader, noise_scheduler, epochs=3, accum=4):
    optimizer = torch.optim.AdamW(unet.parameters(), lr=1e-5)
    lr_scheduler = get_cosine_schedule_with_warmup(optimizer, 500, epochs * len(loader) // accum)
    scaler = torch.amp.GradScaler("cuda")
    for epoch in range(epochs):
        for i, latents in enumerate(loader):
            noise = torch.randn_like(latents)
            t = torch.randint(0, 1000, (latents.shape[0],), device=latents.device)
            with torch.autocast("cuda", dtype=torch.float16):
                pred = unet(noise_scheduler.add_noise(latents, noise, t), t)
                loss = F.mse_loss(pred.float(), noise) / accum
            scaler.scale(loss).backward()
            if (i + 1) % accum == 0:
                scaler.unscale_(optimizer)
                nn.utils.clip_grad_norm_(unet.parameters(), 1.0)
                lr_scheduler.step()  # expect: TL108
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad(set_to_none=True)


class LoRATrainer:
    def __init__(self, model, batches, max_steps=1000):
        self.model = model
        self.batches = batches
        self.max_steps = max_steps
        self.optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=3e-4)
        self.scheduler = torch.optim.lr_scheduler.LinearLR(self.optimizer, start_factor=0.01, total_iters=100)
        self.global_step = 0

    def train(self):
        while self.global_step < self.max_steps:
            self.scheduler.step()  # expect: TL108
            batch = next(self.batches)
            loss = self.model(**batch).loss
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            self.optimizer.step()
            self.global_step += 1


def kfold_mlp(folds, in_dim=64, epochs=30):
    for train_loader, val_loader in folds:
        model = nn.Sequential(nn.Linear(in_dim, 256), nn.ReLU(), nn.Dropout(0.2), nn.Linear(256, 1))
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=1e-2, total_steps=epochs * len(train_loader))
        plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=3)
        for epoch in range(epochs):
            model.train()
            for x, y in train_loader:
                sched.step()  # expect: TL108
                opt.zero_grad(set_to_none=True)
                F.binary_cross_entropy_with_logits(model(x).squeeze(-1), y).backward()
                opt.step()
            model.eval()
            with torch.no_grad():
                val = sum(F.binary_cross_entropy_with_logits(model(x).squeeze(-1), y) for x, y in val_loader)
            plateau.step(val)  # clean


def finetune_unet_ordered(unet, ema, loader, noise_scheduler, epochs=3):
    optimizer = torch.optim.AdamW(unet.parameters(), lr=1e-5)
    lr_scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs * len(loader))
    for epoch in range(epochs):
        for latents in loader:
            noise = torch.randn_like(latents)
            t = torch.randint(0, 1000, (latents.shape[0],), device=latents.device)
            ema.step(unet.parameters())  # clean
            loss = F.mse_loss(unet(noise_scheduler.add_noise(latents, noise, t), t), noise)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            lr_scheduler.step()  # clean


def sample(unet, noise_scheduler, shape=(1, 4, 64, 64)):
    x = torch.randn(shape)
    for t in noise_scheduler.timesteps:
        with torch.no_grad():
            eps = unet(x, t)  # expect: TL103
        x = noise_scheduler.step(eps, t, x).prev_sample  # clean
    return x

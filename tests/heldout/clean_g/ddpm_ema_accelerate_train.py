"""Clean: a DDPM training script on accelerate with an EMA copy of the UNet, gradient
accumulation, periodic logging and in-loop sampling for validation."""
import copy

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from diffusers import DDPMScheduler, UNet2DModel
from torch.utils.data import DataLoader


@torch.no_grad()
def ema_update(ema, model, decay=0.999):
    for e, p in zip(ema.parameters(), model.parameters()):
        e.lerp_(p, 1.0 - decay)


@torch.no_grad()
def sample_grid(ema, scheduler, n, size, device):
    ema.eval()
    x = torch.randn(n, 3, size, size, device=device)
    for t in scheduler.timesteps:
        x = scheduler.step(ema(x, t).sample, t, x).prev_sample
    return (x.clamp(-1, 1) + 1) / 2


def main(dataset, epochs=50, accum=4, log_every=100, sample_every=2000):
    accelerator = Accelerator(mixed_precision="bf16", gradient_accumulation_steps=accum)
    unet = UNet2DModel(sample_size=64, in_channels=3, out_channels=3)
    ema = copy.deepcopy(unet).requires_grad_(False)
    optimizer = torch.optim.AdamW(unet.parameters(), lr=2e-4, weight_decay=1e-2)
    loader = DataLoader(dataset, batch_size=32, shuffle=True, num_workers=8, pin_memory=True, drop_last=True)
    unet, optimizer, loader = accelerator.prepare(unet, optimizer, loader)
    ema.to(accelerator.device)
    noise_scheduler = DDPMScheduler(num_train_timesteps=1000)
    step = 0
    for epoch in range(epochs):
        unet.train()
        running = torch.zeros((), device=accelerator.device)
        for images in loader:
            with accelerator.accumulate(unet):
                noise = torch.randn_like(images)
                t = torch.randint(0, 1000, (images.size(0),), device=images.device)
                pred = unet(noise_scheduler.add_noise(images, noise, t), t).sample
                loss = F.mse_loss(pred.float(), noise.float())
                accelerator.backward(loss)
                if accelerator.sync_gradients:
                    accelerator.clip_grad_norm_(unet.parameters(), 1.0)
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
            if accelerator.sync_gradients:
                ema_update(ema, accelerator.unwrap_model(unet))
                running += loss.detach()
                step += 1
                if step % log_every == 0:
                    accelerator.log({"loss": (running / log_every).item()}, step=step)
                    running.zero_()
                if step % sample_every == 0 and accelerator.is_main_process:
                    grid = sample_grid(ema, noise_scheduler, 16, 64, accelerator.device)
                    accelerator.log({"samples_mean": grid.mean().item()}, step=step)
        accelerator.save_state(f"checkpoints/epoch_{epoch}")

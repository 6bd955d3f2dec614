"""TL401 probe: a DDPM training loop with an EMA of the UNet weights and a noise scheduler:
`loss.item()` fed to a progress bar every step, `timesteps.cpu().tolist()` for a per-timestep
loss histogram every step (the model, optimizer and loader go through the `prepare` of an fp16
`Accelerator`, so the step runs on the GPU); near misses are the EMA decay computed from `.item()` of a step counter
made on the host by `torch.zeros` (a CPU tensor: reading it waits for no kernel), the same logging under `if global_step % log_every == 0`, a `.item()` in the
`if ... and accelerator.is_main_process` form with a `%` test, `.item()` after the loop, a
`.cpu()` of a module-free CPU tensor in the EMA helper (not in a training loop), and `.tolist()`
inside a sampling function that never trains."""
import torch
import torch.nn.functional as F
from accelerate import Accelerator
from diffusers import DDPMScheduler
from tqdm import tqdm


@torch.no_grad()
def update_ema(ema_model, model, decay):
    for ema_p, p in zip(ema_model.parameters(), model.parameters()):
        ema_p.lerp_(p, 1.0 - decay)


def train(unet, ema_unet, loader, optimizer, accelerator, epochs, log_every=50):
    unet, optimizer, loader = accelerator.prepare(unet, optimizer, loader)
    scheduler = DDPMScheduler(num_train_timesteps=1000)
    step_counter = torch.zeros((), dtype=torch.long)
    t_hist = torch.zeros(1000)
    global_step = 0
    unet.train()
    for epoch in range(epochs):
        pbar = tqdm(loader, disable=not accelerator.is_main_process)
        for images in pbar:
            noise = torch.randn_like(images)
            timesteps = torch.randint(0, 1000, (images.size(0),), device=images.device)
            noisy = scheduler.add_noise(images, noise, timesteps)
            loss = F.mse_loss(unet(noisy, timesteps).sample, noise)
            optimizer.zero_grad(set_to_none=True)
            accelerator.backward(loss)
            optimizer.step()
            step_counter += 1
            decay = min(0.9999, (1 + step_counter.item()) / (10 + step_counter.item()))  # clean
            update_ema(ema_unet, unet, decay)
            pbar.set_postfix(loss=loss.item())  # expect: TL401
            for t in timesteps.cpu().tolist():  # expect: TL401
                t_hist[t] += 1
            if global_step % log_every == 0:
                accelerator.log({"loss": loss.item()}, step=global_step)  # clean
            if global_step % 500 == 0 and accelerator.is_main_process:
                accelerator.print(f"step {global_step} loss {loss.item():.4f}")  # clean
            global_step += 1
    print("final loss", loss.item())  # clean
    return t_hist.cpu()  # clean


@torch.no_grad()
def sample(unet, scheduler, shape, device):
    unet.eval()
    x = torch.randn(shape, device=device)
    for t in scheduler.timesteps.tolist():  # clean
        x = scheduler.step(unet(x, t).sample, t, x).prev_sample
    return x


def main(unet, ema_unet, loader, epochs=100):
    accelerator = Accelerator(mixed_precision="fp16", log_with="tensorboard")
    optimizer = torch.optim.AdamW(unet.parameters(), lr=1e-4, weight_decay=1e-2)
    return train(unet, ema_unet, loader, optimizer, accelerator, epochs)

"""TL101 probe: a GAN loop with two optimizers where neither network is cleared, a gradient-accumulation
loop (`if (i + 1) % accum == 0`) that steps but never clears, and an LBFGS refinement loop; near misses
clear both networks (`netD.zero_grad()` on the module), clear inside the accumulation `if` after the
step, or clear inside the LBFGS closure."""
import torch
from torch import nn
import torch.nn.functional as F

latent_dim = 100


def train_gan_epoch(netG: nn.Module, netD: nn.Module, loader, optD, optG):
    bce = nn.BCEWithLogitsLoss()
    for real, _ in loader:  # expect: TL101
        b = real.size(0)
        noise = torch.randn(b, latent_dim, 1, 1, device=real.device)
        fake = netG(noise)
        d_real = netD(real).view(-1)
        d_fake = netD(fake.detach()).view(-1)
        loss_d = bce(d_real, torch.ones_like(d_real)) + bce(d_fake, torch.zeros_like(d_fake))
        loss_d.backward()
        optD.step()

        g_out = netD(fake).view(-1)
        loss_g = bce(g_out, torch.ones_like(g_out))
        loss_g.backward()
        optG.step()


def train_gan_epoch_fixed(netG: nn.Module, netD: nn.Module, loader, optD, optG):
    bce = nn.BCEWithLogitsLoss()
    for real, _ in loader:  # clean
        b = real.size(0)
        fake = netG(torch.randn(b, latent_dim, 1, 1, device=real.device))
        netD.zero_grad()
        d_real = netD(real).view(-1)
        d_fake = netD(fake.detach()).view(-1)
        loss_d = bce(d_real, torch.ones_like(d_real)) + bce(d_fake, torch.zeros_like(d_fake))
        loss_d.backward()
        optD.step()

        netG.zero_grad()
        g_out = netD(fake).view(-1)
        bce(g_out, torch.ones_like(g_out)).backward()
        optG.step()


def finetune_with_accumulation(model, loader, optimizer, accum_steps=8):
    model.train()
    for i, (input_ids, labels) in enumerate(loader):  # expect: TL101
        logits = model(input_ids)
        loss = F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=-100)
        (loss / accum_steps).backward()
        if (i + 1) % accum_steps == 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()


def finetune_with_accumulation_fixed(model, loader, optimizer, accum_steps=8):
    model.train()
    optimizer.zero_grad(set_to_none=True)
    for i, (input_ids, labels) in enumerate(loader):  # clean
        logits = model(input_ids)
        loss = F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=-100)
        (loss / accum_steps).backward()
        if (i + 1) % accum_steps == 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)


def refine_pose(params: torch.Tensor, keypoints, project, iters=20):
    params = params.clone().requires_grad_(True)
    optimizer = torch.optim.LBFGS([params], lr=0.5, max_iter=10, line_search_fn="strong_wolfe")

    def closure():
        optimizer.zero_grad()
        loss = F.smooth_l1_loss(project(params), keypoints)
        loss.backward()
        return loss

    for _ in range(iters):  # clean
        optimizer.step(closure)
    return params.detach()

"""TL402 probe: models moved inside epoch loops of multi-model code. A GAN trainer moves the
generator and the discriminator to the device at the top of every epoch, a distillation loop
moves the frozen teacher with `.cuda()` inside its batch loop, and a feature-matching loss module
goes `.cuda()` every step; near misses are the batch moves (`real.to(device)`,
`z = torch.randn(..., device=device)`), the models moved once before the loop, an EMA copy moved
once at creation, and a teacher moved to the CPU after the loop to free the GPU."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


def train_gan(netG, netD, loader, optG, optD, device, epochs=25, nz=100):
    criterion = nn.BCEWithLogitsLoss()
    for epoch in range(epochs):
        netG.to(device)  # expect: TL402
        netD = netD.to(device)  # expect: TL402
        for real, _ in loader:
            real = real.to(device)  # clean
            b = real.size(0)
            z = torch.randn(b, nz, 1, 1, device=device)  # clean
            fake = netG(z)
            d_loss = criterion(netD(real).view(-1), torch.ones(b, device=device)) + \
                criterion(netD(fake.detach()).view(-1), torch.zeros(b, device=device))
            optD.zero_grad(set_to_none=True)
            d_loss.backward()
            optD.step()
            g_loss = criterion(netD(fake).view(-1), torch.ones(b, device=device))
            optG.zero_grad(set_to_none=True)
            g_loss.backward()
            optG.step()


def train_gan_hoisted(netG, netD, loader, optG, optD, device, epochs=25, nz=100):
    netG.to(device)  # clean
    netD.to(device)  # clean
    ema_G = copy.deepcopy(netG).to(device).eval()  # clean
    criterion = nn.BCEWithLogitsLoss().to(device)  # clean
    for epoch in range(epochs):
        for real, _ in loader:
            real = real.to(device)
            z = torch.randn(real.size(0), nz, 1, 1, device=device)
            fake = netG(z)
            g_loss = criterion(netD(fake).view(-1), torch.ones(real.size(0), device=device))
            optG.zero_grad(set_to_none=True)
            g_loss.backward()
            optG.step()
            with torch.no_grad():
                for pe, p in zip(ema_G.parameters(), netG.parameters()):
                    pe.lerp_(p, 0.001)
    return ema_G


class FeatureMatching(nn.Module):
    def forward(self, f_s, f_t):
        return sum(F.mse_loss(a, b) for a, b in zip(f_s, f_t))


def distill(student, teacher, loader, optimizer, epochs=10):
    fm = FeatureMatching()
    teacher.eval()
    student.cuda()
    for epoch in range(epochs):
        student.train()
        for x, y in loader:
            teacher.cuda()  # expect: TL402
            fm.cuda()  # expect: TL402
            x, y = x.cuda(), y.cuda()
            with torch.no_grad():
                t_logits, t_feats = teacher(x)
            s_logits, s_feats = student(x)
            loss = F.cross_entropy(s_logits, y) + fm(s_feats, t_feats)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
    teacher.cpu()  # clean
    return student

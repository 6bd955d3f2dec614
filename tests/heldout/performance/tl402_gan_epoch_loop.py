"""TL402 probe: a DCGAN trainer that re-moves its generator and its loss module inside the
epoch / batch loops, against moving batches and noise, and a generator that travels to the CPU
for a checkpoint and back in the same loop."""
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def make_generator(nz=100, ngf=64):
    return nn.Sequential(
        nn.ConvTranspose2d(nz, ngf * 4, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 4), nn.ReLU(True),
        nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
        nn.ConvTranspose2d(ngf * 2, 3, 4, 2, 1, bias=False), nn.Tanh(),
    )


def train_gan(netG, netD, loader, epochs, nz=100):
    criterion = nn.BCEWithLogitsLoss()
    optG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    netD = netD.to(device)
    for epoch in range(epochs):
        netG.to(device)  # expect: TL402
        netG.train()
        netD.train()
        for real, _ in loader:
            criterion.to(device)  # expect: TL402
            real = real.to(device, non_blocking=True)  # clean
            noise = torch.randn(real.size(0), nz, 1, 1, device=device)
            fake = netG(noise)
            optD.zero_grad(set_to_none=True)
            d_real = netD(real).view(-1)
            d_fake = netD(fake.detach()).view(-1)
            loss_d = criterion(d_real, torch.ones_like(d_real)) + criterion(d_fake, torch.zeros_like(d_fake))
            loss_d.backward()
            optD.step()
            optG.zero_grad(set_to_none=True)
            d_out = netD(fake).view(-1)
            loss_g = criterion(d_out, torch.ones_like(d_out))
            loss_g.backward()
            optG.step()
    return netG, netD


def train_with_cpu_snapshots(netG, netD, loader, epochs, path, nz=100):
    criterion = nn.BCEWithLogitsLoss()
    optG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    netD = netD.to(device)
    for epoch in range(epochs):
        netG.to(device)  # clean
        netG.train()
        for real, _ in loader:
            noise = torch.randn(real.size(0), nz, 1, 1, device=device)
            d_out = netD(netG(noise)).view(-1)
            loss_g = criterion(d_out, torch.ones_like(d_out))
            optG.zero_grad(set_to_none=True)
            loss_g.backward()
            optG.step()
        torch.save(netG.eval().cpu().state_dict(), f"{path}/netG_{epoch}.pt")
    return netG

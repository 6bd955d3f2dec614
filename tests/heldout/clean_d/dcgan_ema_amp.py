"""Clean script: DCGAN on 64x64 face crops in the style of the PyTorch tutorial (`netG`/`netD`,
`optimizerD`/`optimizerG`, `netD.zero_grad()`), with bf16 autocast, an EMA generator frozen with
`requires_grad_(False)` and updated under `torch.no_grad()`, per-epoch loss averages kept as
floats, and a fixed-noise sample grid rendered under `torch.no_grad()` from the EMA copy."""
import argparse
import copy
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, transforms
from torchvision.utils import save_image

nz, ngf, ndf = 100, 64, 64


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 8, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 8), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 8, ngf * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 4), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf), nn.ReLU(True),
            nn.ConvTranspose2d(ngf, 3, 4, 2, 1, bias=False), nn.Tanh(),
        )

    def forward(self, z):
        return self.main(z)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(3, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 2), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, ndf * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 4), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 4, ndf * 8, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 8), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 8, 1, 4, 1, 0, bias=False),
        )

    def forward(self, x):
        return self.main(x).view(-1)


def weights_init(m):
    if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d)):
        nn.init.normal_(m.weight, 0.0, 0.02)
    elif isinstance(m, nn.BatchNorm2d):
        nn.init.normal_(m.weight, 1.0, 0.02)
        nn.init.zeros_(m.bias)


@torch.no_grad()
def update_ema(ema_g, netG, decay=0.999):
    for e, p in zip(ema_g.parameters(), netG.parameters()):
        e.lerp_(p, 1 - decay)
    for e, b in zip(ema_g.buffers(), netG.buffers()):
        e.copy_(b)


@torch.no_grad()
def render(ema_g, fixed_noise, path):
    ema_g.eval()
    save_image(ema_g(fixed_noise), path, normalize=True, nrow=8)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--epochs", type=int, default=25)
    parser.add_argument("--out", type=Path, default=Path("samples"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    tf = transforms.Compose([
        transforms.Resize(64), transforms.CenterCrop(64), transforms.ToTensor(),
        transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5)),
    ])
    loader = DataLoader(datasets.ImageFolder(args.data, tf), batch_size=128, shuffle=True, num_workers=8,
                        pin_memory=True, drop_last=True, persistent_workers=True)

    netG = Generator().to(device)
    netD = Discriminator().to(device)
    netG.apply(weights_init)
    netD.apply(weights_init)
    ema_g = copy.deepcopy(netG).requires_grad_(False)
    optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    fixed_noise = torch.randn(64, nz, 1, 1, device=device)

    for epoch in range(args.epochs):
        netG.train()
        netD.train()
        sum_d = torch.zeros((), device=device)
        sum_g = torch.zeros((), device=device)
        for real, _ in loader:
            real = real.to(device, non_blocking=True)
            b = real.size(0)
            noise = torch.randn(b, nz, 1, 1, device=device)

            netD.zero_grad(set_to_none=True)
            with torch.autocast(device_type=device.type, dtype=torch.bfloat16):
                fake = netG(noise)
                out_real = netD(real)
                out_fake = netD(fake.detach())
                errD = F.binary_cross_entropy_with_logits(out_real, torch.full_like(out_real, 0.9)) + \
                    F.binary_cross_entropy_with_logits(out_fake, torch.zeros_like(out_fake))
            errD.backward()
            optimizerD.step()

            netG.zero_grad(set_to_none=True)
            with torch.autocast(device_type=device.type, dtype=torch.bfloat16):
                out = netD(fake)
                errG = F.binary_cross_entropy_with_logits(out, torch.ones_like(out))
            errG.backward()
            optimizerG.step()
            update_ema(ema_g, netG)

            sum_d += errD.detach()
            sum_g += errG.detach()
        steps = len(loader)
        print(f"epoch {epoch}: loss_D {float(sum_d) / steps:.3f} loss_G {float(sum_g) / steps:.3f}")
        render(ema_g, fixed_noise, args.out / f"epoch_{epoch:03d}.png")
        torch.save({"G": netG.state_dict(), "D": netD.state_dict(), "ema": ema_g.state_dict()},
                   args.out / "last.pt")


if __name__ == "__main__":
    main()

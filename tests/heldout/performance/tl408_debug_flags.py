"""TL408 probe: anomaly detection left on in a VAE trainer (`set_detect_anomaly(True)` at the top
of `main()`, a `with torch.autograd.detect_anomaly(check_nan=True):` around the step), against a
call guarded by a debug flag, one passing the flag through, and switching it off."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class VAE(nn.Module):
    def __init__(self, d=784, z=20):
        super().__init__()
        self.enc = nn.Linear(d, 400)
        self.mu = nn.Linear(400, z)
        self.logvar = nn.Linear(400, z)
        self.dec = nn.Sequential(nn.Linear(z, 400), nn.ReLU(), nn.Linear(400, d))

    def forward(self, x):
        h = F.relu(self.enc(x))
        mu, logvar = self.mu(h), self.logvar(h)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        return self.dec(z), mu, logvar


def step(model, opt, x):
    recon, mu, logvar = model(x)
    loss = F.binary_cross_entropy_with_logits(recon, x, reduction="sum") - 0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    opt.zero_grad(set_to_none=True)
    with torch.autograd.detect_anomaly(check_nan=True):  # expect: TL408
        loss.backward()
    opt.step()
    return loss.detach()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--debug", action="store_true")
    p.add_argument("--epochs", type=int, default=10)
    args = p.parse_args()
    torch.autograd.set_detect_anomaly(True)  # expect: TL408
    if args.debug:
        torch.autograd.set_detect_anomaly(True)  # clean
    torch.autograd.set_detect_anomaly(args.debug)  # clean
    model = VAE()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    data = torch.rand(60000, 784)
    model.train()
    for epoch in range(args.epochs):
        for x in data.split(128):
            step(model, opt, x)
    torch.autograd.set_detect_anomaly(False)  # clean


if __name__ == "__main__":
    main()

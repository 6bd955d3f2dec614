"""TL102 probe: a GAN trainer class whose `sample_grid()` puts `self.generator` in eval mode between
epochs and nothing in the class switches it back, and notebook-style cells that train, evaluate with
`model.eval()`, then fine-tune again; near misses: a trainer that switches back at the top of each epoch,
and an EMA copy that is only ever evaluated (never trained)."""
import copy

import torch
from torch import nn
import torch.nn.functional as F
from torch.utils.data import DataLoader


class GANTrainer:
    def __init__(self, generator: nn.Module, discriminator: nn.Module, loader, z_dim=128):
        self.generator = generator
        self.discriminator = discriminator
        self.loader = loader
        self.z_dim = z_dim
        self.opt_g = torch.optim.Adam(generator.parameters(), lr=2e-4, betas=(0.5, 0.999))
        self.opt_d = torch.optim.Adam(discriminator.parameters(), lr=2e-4, betas=(0.5, 0.999))
        self.fixed_z = torch.randn(64, z_dim)

    @torch.no_grad()
    def sample_grid(self):
        self.generator.eval()
        return self.generator(self.fixed_z)

    def train_epoch(self):
        for real in self.loader:  # expect: TL102
            z = torch.randn(real.size(0), self.z_dim, device=real.device)
            fake = self.generator(z)
            self.opt_d.zero_grad(set_to_none=True)
            d_loss = F.softplus(self.discriminator(fake.detach())).mean() + F.softplus(-self.discriminator(real)).mean()
            d_loss.backward()
            self.opt_d.step()
            self.opt_g.zero_grad(set_to_none=True)
            g_loss = F.softplus(-self.discriminator(fake)).mean()
            g_loss.backward()
            self.opt_g.step()

    def fit(self, epochs):
        grids = []
        for epoch in range(epochs):
            self.train_epoch()
            grids.append(self.sample_grid().cpu())
        return grids


class GANTrainerFixed(GANTrainer):
    def train_epoch(self):
        self.generator.train()
        for real in self.loader:  # clean
            z = torch.randn(real.size(0), self.z_dim, device=real.device)
            fake = self.generator(z)
            self.opt_g.zero_grad(set_to_none=True)
            F.softplus(-self.discriminator(fake)).mean().backward()
            self.opt_g.step()


# %% notebook: build and train
model = nn.Sequential(nn.Linear(64, 256), nn.BatchNorm1d(256), nn.ReLU(), nn.Dropout(0.2), nn.Linear(256, 10))
ema_model = copy.deepcopy(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
train_dl = DataLoader(torch.load("digits_train.pt", weights_only=True), batch_size=128, shuffle=True,
                      num_workers=2, pin_memory=True)
val_dl = DataLoader(torch.load("digits_val.pt", weights_only=True), batch_size=512, num_workers=2,
                    pin_memory=True)

model.train()
for x, y in train_dl:  # clean
    optimizer.zero_grad(set_to_none=True)
    F.cross_entropy(model(x), y).backward()
    optimizer.step()
    with torch.no_grad():
        for e, p in zip(ema_model.parameters(), model.parameters()):
            e.lerp_(p, 0.01)

# %% validate both
model.eval()
ema_model.eval()
with torch.no_grad():
    acc = sum((model(x).argmax(1) == y).sum() for x, y in val_dl) / len(val_dl.dataset)
    ema_acc = sum((ema_model(x).argmax(1) == y).sum() for x, y in val_dl) / len(val_dl.dataset)
print(f"acc {float(acc):.3f} ema {float(ema_acc):.3f}")

# %% a few more epochs at a lower learning rate
for group in optimizer.param_groups:
    group["lr"] = 0.005
for x, y in train_dl:  # expect: TL102
    optimizer.zero_grad(set_to_none=True)
    F.cross_entropy(model(x), y).backward()
    optimizer.step()

"""TL102 probe: notebook-style top-level code. A validation cell puts the sentiment model in eval mode
and a later cell trains for more epochs without switching back; a GAN whose generator is sampled in eval
mode between epochs."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader

vocab_size, emb_dim, n_classes = 20000, 128, 3
model = nn.Sequential(
    nn.EmbeddingBag(vocab_size, emb_dim), nn.Dropout(0.3), nn.Linear(emb_dim, 64), nn.ReLU(), nn.Linear(64, n_classes)
)
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
train_loader = DataLoader(torch.load("train_ids.pt", weights_only=True), batch_size=64, shuffle=True,
                          num_workers=2)
val_loader = DataLoader(torch.load("val_ids.pt", weights_only=True), batch_size=256, num_workers=2)

# %% first epoch
model.train()
for tokens, labels in train_loader:  # clean
    loss = F.cross_entropy(model(tokens), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# %% validation
model.eval()
with torch.no_grad():
    correct = sum((model(tokens).argmax(1) == labels).sum() for tokens, labels in val_loader)
print("val acc", float(correct) / len(val_loader.dataset))

# %% train a few more epochs
for epoch in range(3):
    for tokens, labels in train_loader:  # expect: TL102
        loss = F.cross_entropy(model(tokens), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def train_gan(generator, discriminator, opt_g, opt_d, loader, epochs, z_dim=64):
    for epoch in range(epochs):
        generator.train()
        for real in loader:  # clean
            z = torch.randn(real.size(0), z_dim)
            fake = generator(z)
            d_loss = F.softplus(discriminator(fake.detach())).mean() + F.softplus(-discriminator(real)).mean()
            opt_d.zero_grad()
            d_loss.backward()
            opt_d.step()
            g_loss = F.softplus(-discriminator(fake)).mean()
            opt_g.zero_grad()
            g_loss.backward()
            opt_g.step()
        generator.eval()
        with torch.no_grad():
            samples = generator(torch.randn(16, z_dim))
        torch.save(samples, f"samples_{epoch}.pt")


def train_gan_broken(generator, discriminator, opt_g, opt_d, loader, epochs, z_dim=64):
    generator.train()
    for epoch in range(epochs):
        for real in loader:  # expect: TL102
            fake = generator(torch.randn(real.size(0), z_dim))
            d_loss = F.softplus(discriminator(fake.detach())).mean() + F.softplus(-discriminator(real)).mean()
            opt_d.zero_grad()
            d_loss.backward()
            opt_d.step()
            g_loss = F.softplus(-discriminator(fake)).mean()
            opt_g.zero_grad()
            g_loss.backward()
            opt_g.step()
        generator.eval()
        with torch.no_grad():
            samples = generator(torch.randn(16, z_dim))
        torch.save(samples, f"samples_{epoch}.pt")

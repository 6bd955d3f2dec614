"""TL401 probe: notebook-style top-level training of an MNIST MLP: `loss.item()` into a list and
a tqdm postfix every step are reported; a random crop size drawn on the host with
`torch.randint(...).item()`, the validation loop's `.item()` (no backward there) and a
periodic print are not."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, transforms
from tqdm import tqdm

device = "cuda" if torch.cuda.is_available() else "cpu"
train_ds = datasets.MNIST("data", train=True, download=True, transform=transforms.ToTensor())
val_ds = datasets.MNIST("data", train=False, download=True, transform=transforms.ToTensor())
train_loader = DataLoader(train_ds, batch_size=128, shuffle=True, num_workers=2, pin_memory=True)
val_loader = DataLoader(val_ds, batch_size=512, num_workers=2, pin_memory=True)
model = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Dropout(0.2), nn.Linear(256, 10)).to(device)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
train_losses = []

for epoch in range(5):
    model.train()
    pbar = tqdm(train_loader, desc=f"epoch {epoch}")
    for step, (x, y) in enumerate(pbar):
        pad = torch.randint(0, 3, (1,)).item()  # clean
        x = F.pad(x, (pad, pad, pad, pad))[..., pad:pad + 28, pad:pad + 28]
        x, y = x.to(device), y.to(device)
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        train_losses.append(loss.item())  # expect: TL401
        pbar.set_postfix(loss=f"{loss.item():.3f}")  # expect: TL401
        if step % 100 == 0:
            print(f"step {step}: {loss.item():.4f}")  # clean
    model.eval()
    correct = 0
    with torch.no_grad():
        for x, y in val_loader:
            correct += (model(x.to(device)).argmax(1) == y.to(device)).sum().item()  # clean
    print(f"epoch {epoch}: val acc {correct / len(val_ds):.4f}")

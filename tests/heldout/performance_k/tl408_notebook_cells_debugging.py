"""TL408 probe: a notebook exported as a script, with top-level cells that train a contrastive
model. One cell turns anomaly detection on with `torch.autograd.set_detect_anomaly(True)` while
hunting a NaN and leaves it on, and the training cell wraps its step in
`with torch.autograd.detect_anomaly():`; near misses are `set_detect_anomaly(False)` in a later
cell, `set_detect_anomaly(DEBUG)` driven by a flag that is off, and `detect_anomaly()` under
`if DEBUG:`."""
# %%
import torch
import torch.nn as nn
import torch.nn.functional as F

DEBUG = False
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.autograd.set_detect_anomaly(True)  # expect: TL408

# %%
encoder = nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 64)).to(device)
optimizer = torch.optim.AdamW(encoder.parameters(), lr=3e-4)
tau = 0.1


def info_nce(z1, z2):
    z1, z2 = F.normalize(z1, dim=-1), F.normalize(z2, dim=-1)
    logits = z1 @ z2.T / tau
    return F.cross_entropy(logits, torch.arange(z1.size(0), device=z1.device))


# %%
for step in range(200):
    x = torch.randn(64, 128, device=device)
    with torch.autograd.detect_anomaly():  # expect: TL408
        loss = info_nce(encoder(x + 0.1 * torch.randn_like(x)), encoder(x + 0.1 * torch.randn_like(x)))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
    optimizer.step()

# %%
torch.autograd.set_detect_anomaly(False)  # clean
torch.autograd.set_detect_anomaly(DEBUG)  # clean

# %%
for step in range(200):
    x = torch.randn(64, 128, device=device)
    if DEBUG:
        with torch.autograd.detect_anomaly():  # clean
            loss = info_nce(encoder(x), encoder(x + 0.1 * torch.randn_like(x)))
    else:
        loss = info_nce(encoder(x), encoder(x + 0.1 * torch.randn_like(x)))
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()

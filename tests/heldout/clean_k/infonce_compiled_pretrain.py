"""SimCLR-style contrastive pre-training with a compiled encoder: InfoNCE with a learnable
temperature, a compiled training step free of graph breaks, a linear-probe evaluation and a
resume path that restores model, optimizer and the temperature."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader


class Projector(nn.Module):
    def __init__(self, d_in, d_hidden=2048, d_out=128):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, d_hidden), nn.BatchNorm1d(d_hidden), nn.ReLU(inplace=True),
                                 nn.Linear(d_hidden, d_out))

    def forward(self, h):
        return F.normalize(self.net(h), dim=-1)


class SimCLR(nn.Module):
    def __init__(self, backbone, feat_dim, init_tau=0.1):
        super().__init__()
        self.backbone = backbone
        self.projector = Projector(feat_dim)
        self.log_inv_tau = nn.Parameter(torch.tensor(math.log(1 / init_tau)))

    def forward(self, x1, x2):
        z1, z2 = self.projector(self.backbone(x1)), self.projector(self.backbone(x2))
        z = torch.cat([z1, z2], dim=0)
        n = z1.size(0)
        sim = z @ z.T * self.log_inv_tau.exp().clamp(max=100.0)
        sim = sim.masked_fill(torch.eye(2 * n, dtype=torch.bool, device=z.device), float("-inf"))
        targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)]).to(z.device)
        return F.cross_entropy(sim, targets)


def train(backbone, feat_dim, dataset, epochs=100, bs=512, ckpt_path=None):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = SimCLR(backbone, feat_dim).to(device)
    compiled = torch.compile(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-6)
    loader = DataLoader(dataset, batch_size=bs, shuffle=True, drop_last=True, num_workers=16, pin_memory=True,
                        persistent_workers=True)
    start = 0
    if ckpt_path is not None:
        state = torch.load(ckpt_path, map_location=device, weights_only=True)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        start = state["epoch"] + 1
    for epoch in range(start, epochs):
        model.train()
        total = torch.zeros((), device=device)
        for (x1, x2), _ in loader:
            x1, x2 = x1.to(device, non_blocking=True), x2.to(device, non_blocking=True)
            with torch.autocast(device_type=device.type, dtype=torch.bfloat16):
                loss = compiled(x1, x2)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            total += loss.detach()
        print(f"epoch {epoch} loss {total.item() / len(loader):.4f} tau {1 / model.log_inv_tau.exp().item():.3f}")
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch},
                   f"simclr_{epoch:03d}.pt")
    return model


@torch.no_grad()
def extract(backbone, loader, device):
    backbone.eval()
    feats, labels = [], []
    for x, y in loader:
        feats.append(backbone(x.to(device, non_blocking=True)).float().cpu())
        labels.append(y)
    return torch.cat(feats), torch.cat(labels)


def linear_probe(backbone, train_loader, test_loader, feat_dim, n_classes, device, epochs=90):
    x_tr, y_tr = extract(backbone, train_loader, device)
    x_te, y_te = extract(backbone, test_loader, device)
    probe = nn.Linear(feat_dim, n_classes).to(device)
    opt = torch.optim.SGD(probe.parameters(), lr=0.1, momentum=0.9)
    x_tr, y_tr = x_tr.to(device), y_tr.to(device)
    for _ in range(epochs):
        perm = torch.randperm(x_tr.size(0), device=device)
        for idx in perm.split(1024):
            loss = F.cross_entropy(probe(x_tr[idx]), y_tr[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
    probe.eval()
    with torch.no_grad():
        acc = (probe(x_te.to(device)).argmax(1) == y_te.to(device)).float().mean()
    return acc.item()

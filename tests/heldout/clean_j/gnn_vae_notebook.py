# Notebook export: full-batch GCN node classification with train/val/test masks, then a small
# VAE on the node features, both evaluated in their own cells.
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

# %% graph
n, d, c = 300, 32, 4
x = torch.randn(n, d, device=device)
y = torch.randint(0, c, (n,), device=device)
edges = torch.randint(0, n, (2, 1500), device=device)
adj = torch.zeros(n, n, device=device)
adj[edges[0], edges[1]] = 1.0
adj = adj + adj.t() + torch.eye(n, device=device)
deg_inv_sqrt = adj.sum(1).clamp(min=1).pow(-0.5)
adj = deg_inv_sqrt[:, None] * adj * deg_inv_sqrt[None, :]
perm = torch.randperm(n, device=device)
train_mask = torch.zeros(n, dtype=torch.bool, device=device)
val_mask = torch.zeros_like(train_mask)
test_mask = torch.zeros_like(train_mask)
train_mask[perm[:180]] = True
val_mask[perm[180:240]] = True
test_mask[perm[240:]] = True


# %% model
class GCN(nn.Module):
    def __init__(self, d_in, d_hidden, n_classes, p=0.5):
        super().__init__()
        self.lin1 = nn.Linear(d_in, d_hidden)
        self.lin2 = nn.Linear(d_hidden, n_classes)
        self.drop = nn.Dropout(p)

    def forward(self, x, adj):
        h = F.relu(adj @ self.lin1(self.drop(x)))
        return adj @ self.lin2(self.drop(h))


@torch.no_grad()
def accuracy(model, mask):
    model.eval()
    pred = model(x, adj).argmax(-1)
    return (pred[mask] == y[mask]).float().mean()


gcn = GCN(d, 64, c).to(device)
opt = torch.optim.Adam(gcn.parameters(), lr=0.01, weight_decay=5e-4)

# %% train with early stopping on validation accuracy
best_val, best_state, patience = 0.0, None, 0
for epoch in range(300):
    gcn.train()
    opt.zero_grad(set_to_none=True)
    loss = F.cross_entropy(gcn(x, adj)[train_mask], y[train_mask])
    loss.backward()
    opt.step()
    val_acc = float(accuracy(gcn, val_mask))
    if val_acc > best_val:
        best_val, patience = val_acc, 0
        best_state = {k: v.detach().clone() for k, v in gcn.state_dict().items()}
    else:
        patience += 1
        if patience == 30:
            break
gcn.load_state_dict(best_state)
print("test accuracy", float(accuracy(gcn, test_mask)))


# %% VAE on node features
class VAE(nn.Module):
    def __init__(self, d_in, d_z=8):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(d_in, 64), nn.ReLU(), nn.Linear(64, 2 * d_z))
        self.dec = nn.Sequential(nn.Linear(d_z, 64), nn.ReLU(), nn.Linear(64, d_in))

    def forward(self, x):
        mu, logvar = self.enc(x).chunk(2, dim=-1)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        return self.dec(z), mu, logvar


vae = VAE(d).to(device)
vae_opt = torch.optim.Adam(vae.parameters(), lr=1e-3)
kl_history = []
for epoch in range(50):
    vae.train()
    for idx in torch.randperm(n, device=device).split(64):
        vae_opt.zero_grad(set_to_none=True)
        recon, mu, logvar = vae(x[idx])
        kl = -0.5 * torch.mean(torch.sum(1 + logvar - mu.pow(2) - logvar.exp(), dim=-1))
        loss = F.mse_loss(recon, x[idx]) + 0.1 * kl
        loss.backward()
        vae_opt.step()
        kl_history.append(kl.detach())

# %% reconstruction error
vae.eval()
with torch.no_grad():
    recon, _, _ = vae(x)
    print("reconstruction mse", F.mse_loss(recon, x).item())

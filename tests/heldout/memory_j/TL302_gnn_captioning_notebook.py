# Notebook export: full-batch node classification on a small random graph, then an image captioner
# evaluated in later cells.
# TL302 probe: a GNN `test` function after `model.eval()` without `no_grad`, a caption-scoring
# function that freezes only the encoder while the decoder still records a graph, a VAE
# reconstruction check in a top-level loop cell, and a normalizing-flow likelihood over a validation
# loader; near misses evaluate under `torch.no_grad()`, run a decoder frozen with
# `p.requires_grad = False` over its parameters, and train again after `model.train()`.
import torch
import torch.nn.functional as F
from torch import nn


class GCN(nn.Module):
    def __init__(self, d_in, d_hidden, n_classes):
        super().__init__()
        self.lin1 = nn.Linear(d_in, d_hidden)
        self.lin2 = nn.Linear(d_hidden, n_classes)
        self.drop = nn.Dropout(0.5)

    def forward(self, x, adj):
        h = F.relu(adj @ self.lin1(self.drop(x)))
        return adj @ self.lin2(self.drop(h))


def test(model, x, adj, y, mask):
    model.eval()
    pred = model(x, adj).argmax(-1)  # expect: TL302
    return (pred[mask] == y[mask]).float().mean()


@torch.no_grad()
def test_no_grad(model, x, adj, y, mask):
    model.eval()
    pred = model(x, adj).argmax(-1)  # clean
    return (pred[mask] == y[mask]).float().mean()


def score_captions(encoder, decoder, images, captions):
    encoder.eval()
    decoder.eval()
    encoder.requires_grad_(False)
    feats = encoder(images)  # clean
    logits = decoder(feats, captions[:, :-1])  # expect: TL302
    return F.cross_entropy(logits.transpose(1, 2), captions[:, 1:])


def score_captions_frozen(encoder, decoder, images, captions):
    encoder.eval()
    decoder.eval()
    encoder.requires_grad_(False)
    for p in decoder.parameters():
        p.requires_grad = False
    feats = encoder(images)  # clean
    logits = decoder(feats, captions[:, :-1])  # clean
    return F.cross_entropy(logits.transpose(1, 2), captions[:, 1:])


def flow_bits_per_dim(flow, val_loader):
    flow.eval()
    total, n = 0.0, 0
    for x in val_loader:
        log_p = flow(x)  # expect: TL302
        total += float(-log_p.sum())
        n += x[0].numel() * x.size(0)
    return total / (n * torch.log(torch.tensor(2.0)))


# %% data and model
torch.manual_seed(0)
n_nodes = 100
x = torch.randn(n_nodes, 16)
adj = (torch.rand(n_nodes, n_nodes) < 0.05).float()
adj = adj + adj.t() + torch.eye(n_nodes)
adj = adj / adj.sum(1, keepdim=True)
y = torch.randint(0, 3, (n_nodes,))
train_mask = torch.rand(n_nodes) < 0.6
val_mask = ~train_mask
model = GCN(16, 32, 3)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)

# %% train
model.train()
for epoch in range(100):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x, adj)[train_mask], y[train_mask])
    loss.backward()
    optimizer.step()

# %% evaluate
print(test_no_grad(model, x, adj, y, val_mask))

# %% autoencoder check on node features
ae = nn.Sequential(nn.Linear(16, 4), nn.Tanh(), nn.Linear(4, 16))
ae.eval()
errors = []
for chunk in x.split(25):
    errors.append(F.mse_loss(ae(chunk), chunk))  # expect: TL302

# %% fine-tune again
model.train()
for epoch in range(20):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x, adj)[train_mask], y[train_mask])  # clean
    loss.backward()
    optimizer.step()

"""TL301 probe: seq2seq teacher forcing whose per-step loss (summed over decoder time steps, rightly
bound afresh each batch) goes into an epoch total, full-batch GNN training that keeps each epoch's
node logits for later analysis, a MAML meta-loss history, a curriculum loop over stages whose stage
losses are kept, and a notebook-style top-level loop; near misses sum the time-step losses into a
total the batch loop binds afresh, keep `.detach()`ed logits, keep accuracies computed from
`argmax` (no graph), and sum `float(...)` values."""
import torch
import torch.nn.functional as F
from torch import nn


def teacher_forcing_epoch(encoder, decoder, optimizer, loader, bos):
    epoch_loss = 0.0
    for src, tgt in loader:
        optimizer.zero_grad()
        h = encoder(src)
        token = torch.full((src.size(0),), bos, dtype=torch.long, device=src.device)
        loss = 0.0
        for t in range(tgt.size(1)):
            logits, h = decoder(token, h)
            loss += F.cross_entropy(logits, tgt[:, t])  # clean
            token = tgt[:, t]
        loss.backward()
        optimizer.step()
        epoch_loss += loss  # expect: TL301
    return epoch_loss / len(loader)


def gnn_full_batch(model, data, optimizer, epochs=200):
    snapshots, kept, accs = [], [], []
    for epoch in range(epochs):
        optimizer.zero_grad()
        out = model(data.x, data.edge_index)
        loss = F.cross_entropy(out[data.train_mask], data.y[data.train_mask])
        loss.backward()
        optimizer.step()
        snapshots.append(out)  # expect: TL301
        kept.append(out.detach())  # clean
        accs.append((out.argmax(-1)[data.val_mask] == data.y[data.val_mask]).float().mean())  # clean
    return snapshots, kept, accs


def maml_outer(model, meta_opt, task_batches, adapt):
    meta_history = []
    for tasks in task_batches:
        meta_opt.zero_grad()
        meta_loss = 0.0
        for support, (x_q, y_q) in tasks:
            fast = adapt(model, support)
            meta_loss = meta_loss + F.cross_entropy(fast(x_q), y_q)  # clean
        meta_loss.backward()
        meta_opt.step()
        meta_history.append(meta_loss)  # expect: TL301
    return meta_history


def curriculum(model, optimizer, stages):
    stage_losses = {}
    for name, loader in stages:
        running = 0.0
        for x, y in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            running += float(loss)  # clean
        stage_losses[name] = running
    return stage_losses


def curriculum_keeping_graphs(model, optimizer, stages):
    stage_losses = {}
    for name, loader in stages:
        stage_losses[name] = []
        for x, y in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            stage_losses[name].append(loss)  # expect: TL301
    return stage_losses


# %% notebook: quick autoencoder fit
ae = nn.Sequential(nn.Linear(64, 8), nn.ReLU(), nn.Linear(8, 64))
opt = torch.optim.Adam(ae.parameters(), lr=1e-3)
data = torch.randn(512, 64)
train_losses = []
for epoch in range(10):
    for xb in data.split(64):
        opt.zero_grad()
        recon_loss = F.mse_loss(ae(xb), xb)
        recon_loss.backward()
        opt.step()
        train_losses.append(recon_loss)  # expect: TL301

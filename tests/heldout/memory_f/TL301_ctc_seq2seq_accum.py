"""TL301 probe: a CTC speech trainer under AMP with gradient accumulation that adds the scaled loss into
an epoch total, a teacher-forcing seq2seq loop that keeps the decoder outputs of every batch to compute
BLEU later and sums `epoch_loss = epoch_loss + loss`, and a notebook-style top-level graph-net loop that
appends each step's loss; near misses sum `loss.item()` and `loss.detach()`, keep `argmax` token ids
(no graph), and accumulate the loss of one accumulation window in a local that is reset and
backpropagated in the same iteration."""
import torch
import torch.nn.functional as F
from torch import nn


def train_ctc(model, loader, optimizer, scaler, accum=4, epochs=10):
    ctc = nn.CTCLoss(blank=0, zero_infinity=True)
    for epoch in range(epochs):
        epoch_total, epoch_float = 0.0, 0.0
        for i, (feats, targets, feat_lens, tgt_lens) in enumerate(loader):
            with torch.autocast("cuda", dtype=torch.bfloat16):
                log_probs = model(feats).log_softmax(-1).float()
            loss = ctc(log_probs.transpose(0, 1), targets, feat_lens, tgt_lens) / accum
            scaler.scale(loss).backward()
            if (i + 1) % accum == 0:
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad(set_to_none=True)
            epoch_total += loss  # expect: TL301
            epoch_float += loss.detach()  # clean
        print(epoch, float(epoch_total), float(epoch_float))


def train_seq2seq(model, loader, optimizer, pad_id=0):
    epoch_loss = 0
    hypotheses, outputs = [], []
    for src, tgt in loader:
        logits = model(src, tgt[:, :-1])
        loss = F.cross_entropy(logits.flatten(0, 1), tgt[:, 1:].flatten(), ignore_index=pad_id)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        outputs.append(logits)  # expect: TL301
        hypotheses.append(logits.argmax(-1))  # clean
        epoch_loss = epoch_loss + loss  # expect: TL301
    return epoch_loss / len(loader), hypotheses, outputs


def train_window(model, loader, optimizer, window=8):
    for step, (x, y) in enumerate(loader):
        window_loss = 0.0
        for xs, ys in zip(x.chunk(window), y.chunk(window)):
            window_loss = window_loss + F.mse_loss(model(xs), ys)  # clean
        optimizer.zero_grad(set_to_none=True)
        (window_loss / window).backward()
        optimizer.step()


# --- notebook cells: GCN on a citation graph ---------------------------------------------------
class GCN(nn.Module):
    def __init__(self, in_dim, hidden, n_classes):
        super().__init__()
        self.lin1 = nn.Linear(in_dim, hidden)
        self.lin2 = nn.Linear(hidden, n_classes)

    def forward(self, x, adj):
        return self.lin2(adj @ F.relu(self.lin1(adj @ x)))


features = torch.randn(2708, 1433)
adj_norm = torch.eye(2708)
labels = torch.randint(0, 7, (2708,))
gcn = GCN(1433, 16, 7)
opt = torch.optim.Adam(gcn.parameters(), lr=0.01, weight_decay=5e-4)
losses, loss_values = [], []
for epoch in range(200):
    opt.zero_grad(set_to_none=True)
    loss = F.cross_entropy(gcn(features, adj_norm), labels)
    loss.backward()
    opt.step()
    losses.append(loss)  # expect: TL301
    if epoch % 10 == 0:
        loss_values.append(loss.item())  # clean

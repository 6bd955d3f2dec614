"""TL201 probe: `nn.LogSoftmax()` / `nn.Softmin()` constructed without dim in a Lightning-style module;
near misses are a locally defined `softmax` helper, `Tensor.softmax(-1)` and a positional module dim."""
import torch
import torch.nn as nn
import lightning as L


def softmax(x, temperature=1.0):
    z = x / temperature
    return (z - z.logsumexp(dim=-1, keepdim=True)).exp()


class ToxicityClassifier(L.LightningModule):
    def __init__(self, vocab=30522, dim=256, n_labels=6):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab, dim)
        self.fc = nn.Linear(dim, n_labels)
        self.to_log_probs = nn.LogSoftmax()  # expect: TL201
        self.to_probs = nn.Softmax(1)  # clean
        self.nll = nn.NLLLoss()

    def forward(self, tokens, offsets):
        return self.fc(self.embed(tokens, offsets))

    def training_step(self, batch, batch_idx):
        tokens, offsets, labels = batch
        return self.nll(self.to_log_probs(self(tokens, offsets)), labels)

    def predict_step(self, batch, batch_idx):
        tokens, offsets, _ = batch
        logits = self(tokens, offsets)
        return softmax(logits, temperature=2.0), logits.softmax(-1)  # clean

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-3)


class DistanceAssigner(nn.Module):
    def __init__(self, n_centroids=32, dim=64):
        super().__init__()
        self.centroids = nn.Parameter(torch.randn(n_centroids, dim))
        self.assign = nn.Softmin()  # expect: TL201

    def forward(self, x):
        return self.assign(torch.cdist(x, self.centroids))

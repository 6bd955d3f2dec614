"""TL601 probe: a Lightning-style module compiled with `torch.compile(model)`, where only
`forward` (and what it calls on `self`) is traced: `training_step`'s `print` and `.item()` run
eagerly; in `forward`, an `if` on `torch.isnan(...).any()` and `torch.any(mask)` break, while
branches on `x.requires_grad`, `x.ndim` and a loop over `range(x.size(0))` do not; the file turns
`capture_scalar_outputs` on, so `.item()` and the `.tolist()` of integer bucket ids in compiled
code are captured, but the `.tolist()` of float probabilities still breaks."""
import torch
import torch._dynamo
import torch.nn.functional as F
from torch import nn

torch._dynamo.config.capture_scalar_outputs = True


class LitRegressor(nn.Module):
    def __init__(self, in_dim=32, hidden=64, n_buckets=8):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        self.boundaries = nn.Parameter(torch.linspace(-3, 3, n_buckets), requires_grad=False)

    def forward(self, x, mask=None):
        if x.ndim == 1:  # clean
            x = x.unsqueeze(0)
        if x.requires_grad:  # clean
            x = x + 0.0
        y = self.net(x).squeeze(-1)
        if torch.isnan(y).any():  # expect: TL601
            y = torch.nan_to_num(y)
        if mask is not None and torch.any(mask):  # expect: TL601
            y = y.masked_fill(~mask, 0.0)
        for i in range(x.size(0)):  # clean
            y[i] = y[i] * 1.0
        scale = y.abs().max().item()  # clean
        buckets = torch.bucketize(y.detach(), self.boundaries)
        probs = torch.sigmoid(self.net(x)).tolist()  # expect: TL601
        return y / (scale + 1e-6), buckets.tolist(), probs  # clean

    def training_step(self, batch, batch_idx):
        x, target = batch
        pred, _ = self(x)
        loss = F.mse_loss(pred, target)
        if batch_idx % 100 == 0:
            print(f"step {batch_idx} loss {loss.item():.4f}")  # clean
        return loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=3e-4)


model = torch.compile(LitRegressor())

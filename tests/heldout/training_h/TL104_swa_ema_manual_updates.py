"""TL104 probe: hand-written EMA updates on the live model's parameters outside `no_grad`, a manual SGD
step on `nn.Parameter` weights of a notebook-style linear model, weight clipping of a WGAN critic
without `no_grad`, and a learnable temperature clamped in place in the training loop; near misses
update the EMA copy under `torch.no_grad()` or through `.data`, clip and clamp under `no_grad`, use
`torch.nn.init` on a fresh layer, and step the notebook weights inside `with torch.no_grad():`."""
import torch
from torch import nn


def ema_update_live(model, ema, decay=0.999):
    for p, e in zip(model.parameters(), ema.parameters()):
        p.mul_(decay).add_(e, alpha=1 - decay)  # expect: TL104


@torch.no_grad()
def ema_update(ema, model, decay=0.999):
    for e, p in zip(ema.parameters(), model.parameters()):
        e.mul_(decay).add_(p, alpha=1 - decay)  # clean


def ema_update_data(ema, model, decay=0.999):
    for e, p in zip(ema.parameters(), model.parameters()):
        e.data.mul_(decay).add_(p.data, alpha=1 - decay)  # clean


def clip_critic(critic, c=0.01):
    for p in critic.parameters():
        p.clamp_(-c, c)  # expect: TL104


def clip_critic_no_grad(critic, c=0.01):
    with torch.no_grad():
        for p in critic.parameters():
            p.clamp_(-c, c)  # clean


class ContrastiveHead(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, 128)
        self.logit_scale = nn.Parameter(torch.tensor(2.659))

    def forward(self, a, b):
        a = nn.functional.normalize(self.proj(a), dim=-1)
        b = nn.functional.normalize(self.proj(b), dim=-1)
        return self.logit_scale.exp() * a @ b.t()


def train_clip_head(head, loader, optimizer):
    for a, b in loader:
        optimizer.zero_grad(set_to_none=True)
        logits = head(a, b)
        labels = torch.arange(logits.size(0), device=logits.device)
        nn.functional.cross_entropy(logits, labels).backward()
        optimizer.step()
        head.logit_scale.clamp_(0, 4.6052)  # expect: TL104


def train_clip_head_no_grad(head, loader, optimizer):
    for a, b in loader:
        optimizer.zero_grad(set_to_none=True)
        logits = head(a, b)
        labels = torch.arange(logits.size(0), device=logits.device)
        nn.functional.cross_entropy(logits, labels).backward()
        optimizer.step()
        with torch.no_grad():
            head.logit_scale.clamp_(0, 4.6052)  # clean


def fresh_layer(dim):
    layer = nn.Linear(dim, dim)
    nn.init.orthogonal_(layer.weight)  # clean
    nn.init.zeros_(layer.bias)  # clean
    return layer


w = torch.randn(10, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
xs, ys = torch.randn(100, 10), torch.randn(100, 1)
for it in range(100):
    loss = ((xs @ w + b - ys) ** 2).mean()
    loss.backward()
    w -= 0.01 * w.grad  # expect: TL104
    b -= 0.01 * b.grad  # expect: TL104
    w.grad = None
    b.grad = None

w2 = torch.randn(10, 1, requires_grad=True)
for it in range(100):
    loss = ((xs @ w2 - ys) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w2 -= 0.01 * w2.grad  # clean
    w2.grad = None

"""TL105/TL107 probe: a per-sample-gradient script with `torch.func` (`vmap(grad(...))`) that defines
`device` from the local rank but builds its noise with `device="cuda"` and moves the resumed EMA
buffers with `.cuda()`, and a checkpoint-resume sanity check that recomputes the loss under
`torch.no_grad()` and calls `.backward()` on it to "verify" gradients; near misses use `torch.func.grad`
inside `no_grad` (functional transforms compute gradients without `.backward()`), `.to(device)`,
`torch.device("cuda", rank)`, and `"cuda" in str(device)` checks."""
import os

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, grad, vmap

rank = int(os.environ.get("LOCAL_RANK", 0))
device = torch.device("cuda", rank)  # clean
model = nn.Sequential(nn.Linear(32, 64), nn.Tanh(), nn.Linear(64, 10)).to(device)
params = {k: v.detach() for k, v in model.named_parameters()}


def sample_loss(p, x, y):
    out = functional_call(model, p, (x.unsqueeze(0),))
    return F.cross_entropy(out, y.unsqueeze(0))


def private_step(x, y, lr=0.05, clip=1.0, sigma=0.8):
    with torch.no_grad():
        per_sample = vmap(grad(sample_loss), in_dims=(None, 0, 0))(params, x, y)  # clean
        for name, g in per_sample.items():
            norms = g.flatten(1).norm(dim=1).clamp(min=clip) / clip
            noisy = (g / norms.view(-1, *[1] * (g.dim() - 1))).sum(0)
            noisy += sigma * clip * torch.randn(noisy.shape, device="cuda")  # expect: TL105
            params[name] -= lr * noisy / x.shape[0]


def resume(path):
    state = torch.load(path, map_location=device, weights_only=True)
    model.load_state_dict(state["model"])
    ema = {k: v.cuda() for k, v in state["ema"].items()}  # expect: TL105
    on_gpu = "cuda" in str(device)  # clean
    return ema, on_gpu


def verify_resumed_gradients(batch):
    x, y = batch[0].to(device), batch[1].to(device)
    with torch.no_grad():
        loss = F.cross_entropy(model(x), y)
        loss.backward()  # expect: TL107
    return [p.grad for p in model.parameters()]


def verify_resumed_gradients_enabled(batch):
    x, y = batch[0].to(device), batch[1].to(device)
    with torch.no_grad():
        reference = model(x).argmax(-1)
    loss = F.cross_entropy(model(x), y)
    loss.backward()  # clean
    return reference, [p.grad for p in model.parameters()]

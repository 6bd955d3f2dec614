"""TL107 probe: a backward under `torch.set_grad_enabled(False)` and one in an `inference_mode` block of a
notebook cell; near misses are an LBFGS closure defined inside a no_grad block but run by `step()`,
and a backward after the no_grad block has closed."""
import torch
import torch.nn.functional as F

model = torch.nn.Linear(16, 4)
x, y = torch.randn(32, 16), torch.randint(0, 4, (32,))

with torch.inference_mode():
    loss = F.cross_entropy(model(x), y)
    loss.backward()  # expect: TL107


def probe_loss(model, x, y):
    with torch.set_grad_enabled(False):
        loss = F.cross_entropy(model(x), y)
        loss.backward()  # expect: TL107
    return loss


def fit_lbfgs(model, x, y, steps=10):
    optimizer = torch.optim.LBFGS(model.parameters(), lr=1.0)
    with torch.no_grad():
        scale = x.std()

    def closure():
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x / scale), y)
        loss.backward()  # clean
        return loss

    for _ in range(steps):
        optimizer.step(closure)

"""TL301 probe: an exponentially smoothed loss kept as a tensor (`ema = 0.98 * ema + 0.02 * loss`), a dict
of running sums and a `running = running + loss * n` total; near misses count correct predictions (no graph), smooth a detached value, and keep
per-batch tensors only inside the iteration."""
import torch
import torch.nn.functional as F


def train(model, optimizer, loader, log_every=100):
    model.train()
    smoothed = 0.0
    sums = {"loss": 0.0}
    correct = 0
    for step, (x, y) in enumerate(loader):
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        correct += (logits.argmax(dim=1) == y).sum()  # clean
        sums["loss"] += loss  # expect: TL301
        smoothed = 0.98 * smoothed + 0.02 * loss  # expect: TL301
        if step % log_every == 0:
            print(step, float(smoothed), float(correct))
    return sums


def train_detached(model, optimizer, loader):
    model.train()
    ema = torch.zeros(())
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        ema = 0.98 * ema + 0.02 * loss.detach()  # clean
        parts = [loss.detach()]
        parts.append(loss)  # clean
    return ema


def train_running(model, optimizer, loader):
    model.train()
    running = torch.zeros(())
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        running = running + loss * x.size(0)  # expect: TL301
    return running / len(loader.dataset)

"""TL107 probe: test-time adaptation that runs a backward pass inside the evaluation `no_grad` block or a
`@torch.no_grad()` function; near misses are the transfer-learning `set_grad_enabled(phase == "train")`
idiom and a backward after the no_grad block closed."""
import torch
import torch.nn.functional as F


def entropy(logits):
    return -(logits.softmax(dim=1) * logits.log_softmax(dim=1)).sum(dim=1).mean()


def tent_adapt_broken(model, optimizer, loader):
    model.train()
    preds = []
    with torch.no_grad():
        for x in loader:
            logits = model(x)
            loss = entropy(logits)
            optimizer.zero_grad()
            loss.backward()  # expect: TL107
            optimizer.step()
            preds.append(logits.argmax(1))
    return torch.cat(preds)


@torch.no_grad()
def adapt_norm_stats(model, optimizer, x):
    model.train()
    loss = entropy(model(x))
    loss.backward()  # expect: TL107
    optimizer.step()


def run_phases(model, optimizer, loaders, epochs):
    for epoch in range(epochs):
        for phase in ("train", "val"):
            model.train(phase == "train")
            for x, y in loaders[phase]:
                optimizer.zero_grad()
                with torch.set_grad_enabled(phase == "train"):
                    loss = F.cross_entropy(model(x), y)
                    if phase == "train":
                        loss.backward()  # clean
                        optimizer.step()


def tent_adapt(model, optimizer, loader):
    model.train()
    preds = []
    for x in loader:
        logits = model(x)
        loss = entropy(logits)
        optimizer.zero_grad()
        loss.backward()  # clean
        optimizer.step()
        with torch.no_grad():
            preds.append(logits.argmax(1))
    return torch.cat(preds)

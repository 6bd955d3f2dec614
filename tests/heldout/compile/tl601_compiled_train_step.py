"""TL601 probe: a whole training step compiled with `step = torch.compile(step)` and a
decorated metrics function: `.item()` and `print` inside, `.tolist()` of predictions, against
a branch on `torch.compiler.is_compiling()` and the same calls outside compiled code."""
import torch
import torch.nn.functional as F


def train_step(model, optimizer, images, labels):
    logits = model(images)
    loss = F.cross_entropy(logits, labels, label_smoothing=0.1)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    if not torch.compiler.is_compiling():  # clean
        print("eager step")
    return loss.detach(), loss.item()  # expect: TL601


train_step = torch.compile(train_step)


@torch.compile(fullgraph=False)
def batch_metrics(logits, labels):
    preds = logits.argmax(dim=-1)
    acc = (preds == labels).float().mean()
    print(f"accuracy {acc}")  # expect: TL601
    return acc, preds.tolist()  # expect: TL601


def log_metrics(logits, labels, step):
    preds = logits.argmax(dim=-1)
    print(step, (preds == labels).float().mean().item(), preds.tolist())  # clean


def fit(model, optimizer, loader, device, epochs=1):
    model.train()
    for epoch in range(epochs):
        for step, (images, labels) in enumerate(loader):
            images = images.to(device, non_blocking=True)
            labels = labels.to(device, non_blocking=True)
            loss, _ = train_step(model, optimizer, images, labels)

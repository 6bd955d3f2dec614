"""TL404 probe: DP-SGD with per-sample gradients taken by looping over `range(x.size(0))` and
calling the model on `x[i].unsqueeze(0)`, and a batch of images scored one by one through a
`torch.no_grad` helper (`model(images[i:i + 1])`); near misses are a reranker scoring
`range(len(pairs))` pairs of strings one at a time (the model input is tokenized per item from
Python strings, not a sample sliced from a batched tensor: slow, but not the catalogue's
`x[i]` pattern), loops over the classes of a batch to build masks (the
model runs once on the whole batch), call the tokenizer per sample, run a model over chunks of
a stepped range, and call a per-sample *loss* (no model) on outputs of one batched call."""
import torch
import torch.nn.functional as F


def dp_sgd_step(model, optimizer, x, y, clip=1.0, noise=1.1):
    summed = [torch.zeros_like(p) for p in model.parameters()]
    for i in range(x.size(0)):
        out = model(x[i].unsqueeze(0))  # expect: TL404
        loss = F.cross_entropy(out, y[i].unsqueeze(0))
        grads = torch.autograd.grad(loss, list(model.parameters()))
        norm = torch.sqrt(sum((g ** 2).sum() for g in grads))
        factor = (clip / (norm + 1e-6)).clamp(max=1.0)
        for s, g in zip(summed, grads):
            s.add_(g * factor)
    for p, s in zip(model.parameters(), summed):
        p.grad = (s + noise * clip * torch.randn_like(s)) / x.size(0)
    optimizer.step()


@torch.no_grad()
def rerank(reranker, tokenizer, pairs, device):
    reranker.eval()
    scores = []
    for i in range(len(pairs)):
        enc = tokenizer(pairs[i][0], pairs[i][1], return_tensors="pt").to(device)  # clean
        scores.append(reranker(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"]).logits[0, 0])  # clean
    return torch.stack(scores)


@torch.no_grad()
def score_images(model, images):
    model.eval()
    scores = []
    for i in range(images.size(0)):
        scores.append(model(images[i:i + 1]).softmax(-1))  # expect: TL404
    return torch.cat(scores)


@torch.no_grad()
def classwise_recall(model, images, labels, n_classes):
    model.eval()
    preds = model(images).argmax(-1)  # clean
    recalls = []
    for c in range(n_classes):
        mask = labels == c
        recalls.append((preds[mask] == c).float().mean())
    return torch.stack(recalls)


@torch.no_grad()
def chunked_embed(model, x, chunk=256):
    model.eval()
    return torch.cat([model(x[i:i + chunk]) for i in range(0, x.size(0), chunk)])  # clean


def per_sample_losses(model, x, y):
    logits = model(x)  # clean
    return torch.stack([F.cross_entropy(logits[i:i + 1], y[i:i + 1]) for i in range(x.size(0))])

"""TL302 probe: evaluation that leaves grad on under `autocast` alone; near misses freeze the model with
`requires_grad_(False)` or `p.requires_grad = False` (no graph can be built), evaluate in `train(False)`
mode under `inference_mode`, or make one call after a closed `no_grad` block outside any loop over data
(which may be part of a differentiable forward)."""
import torch


def evaluate_amp(model, loader):
    model.eval()
    hits = 0
    with torch.autocast(device_type="cuda", dtype=torch.float16):
        for x, y in loader:
            hits += (model(x).argmax(1) == y).sum()  # expect: TL302
    return hits


def embed_then_score(model, classifier, images):
    model.eval()
    classifier.eval()
    with torch.no_grad():
        feats = model(images)  # clean
    return classifier(feats)  # clean


def evaluate_frozen(model, loader):
    model.eval()
    model.requires_grad_(False)
    hits = 0
    for x, y in loader:
        hits += (model(x).argmax(1) == y).sum()  # clean
    return hits


@torch.inference_mode()
def evaluate_train_false(model, loader):
    model.train(False)
    hits = 0
    for x, y in loader:
        hits += (model(x).argmax(1) == y).sum()  # clean
    return hits


def evaluate_amp_loop(model, loader):
    model.eval()
    return [model(x).argmax(1) for x, _ in loader]  # expect: TL302


def evaluate_frozen_loop(model, loader):
    model.eval()
    for p in model.parameters():
        p.requires_grad = False
    return [model(x).argmax(1) for x, _ in loader]  # clean

"""TL403 probe: growing tensors batch by batch. An embedding extractor for InfoNCE negatives grows
`bank = torch.cat([bank, z])` over the loader, a multi-label evaluator grows its scores and
targets with `torch.cat((..., ...))` from `None`, and a segmentation evaluator stacks
confusion matrices onto an accumulator with `torch.stack`; near misses are greedy decoding and
beam search that append the chosen token to the sequence the model reads next step (the growth is
the algorithm), lists concatenated once after the loop, and a U-Net decoder concatenating skip
features."""
import torch
import torch.nn.functional as F


@torch.no_grad()
def build_negative_bank(encoder, loader, device):
    encoder.eval()
    bank = torch.empty(0, device=device)
    for x, _ in loader:
        z = F.normalize(encoder(x.to(device)), dim=-1)
        bank = torch.cat([bank, z])  # expect: TL403
    return bank


@torch.no_grad()
def multilabel_scores(model, loader, device):
    model.eval()
    scores, targets = None, None
    for x, y in loader:
        s = torch.sigmoid(model(x.to(device))).cpu()
        scores = s if scores is None else torch.cat((scores, s))  # expect: TL403
        targets = y if targets is None else torch.cat((targets, y))  # expect: TL403
    return scores, targets


@torch.no_grad()
def confusion_per_batch(model, loader, n_classes, device):
    model.eval()
    mats = torch.zeros(0, n_classes, n_classes, dtype=torch.long)
    for x, y in loader:
        pred = model(x.to(device)).argmax(1).cpu()
        cm = torch.bincount(y.flatten() * n_classes + pred.flatten(), minlength=n_classes ** 2)
        mats = torch.cat([mats, cm.view(1, n_classes, n_classes)])  # expect: TL403
    return mats.sum(0)


@torch.no_grad()
def multilabel_scores_listed(model, loader, device):
    model.eval()
    scores, targets = [], []
    for x, y in loader:
        scores.append(torch.sigmoid(model(x.to(device))).cpu())
        targets.append(y)
    return torch.cat(scores), torch.cat(targets)  # clean


@torch.no_grad()
def greedy_decode(model, src, bos_id, eos_id, max_len=50):
    model.eval()
    ys = torch.full((src.size(0), 1), bos_id, dtype=torch.long, device=src.device)
    memory = model.encode(src)
    for _ in range(max_len):
        logits = model.decode(ys, memory)[:, -1]
        next_tok = logits.argmax(-1, keepdim=True)
        ys = torch.cat([ys, next_tok], dim=1)  # clean
        if (next_tok == eos_id).all():
            break
    return ys


def unet_decode(blocks, x, skips):
    for block in blocks:
        x = F.interpolate(x, scale_factor=2)
        x = block(torch.cat((x, skips.pop()), dim=1))  # clean
    return x

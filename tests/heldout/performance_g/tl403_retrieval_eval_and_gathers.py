"""TL403 probe: a CLIP-style evaluation script that grows its gallery embeddings with
`torch.cat([gallery, emb])` per batch, a CTC decoder that grows a hypothesis tensor with
`torch.cat((hyp, tok), dim=1)` per step, and an ensemble's out-of-fold prediction buffer grown with
`torch.cat((oof, preds), 0)` per fold model; near misses are embeddings appended to a list and concatenated once after
the loop, a `torch.cat` of two fresh tensors inside the loop (image and text features of the same
batch, not an accumulator), a `torch.cat` that pads a batch, and an accumulator grown in a
comprehension that is concatenated once."""
import torch
import torch.nn.functional as F


@torch.no_grad()
def build_gallery(model, loader, device):
    model.eval()
    gallery = torch.empty(0, 512, device=device)
    for images, _ in loader:
        emb = F.normalize(model.encode_image(images.to(device)), dim=-1)
        gallery = torch.cat([gallery, emb])  # expect: TL403
    return gallery


@torch.no_grad()
def build_gallery_listed(model, loader, device):
    model.eval()
    chunks = []
    for images, texts in loader:
        img = model.encode_image(images.to(device))
        txt = model.encode_text(texts.to(device))
        pair = torch.cat([img, txt], dim=-1)  # clean
        chunks.append(pair)
    return torch.cat(chunks)  # clean


@torch.no_grad()
def greedy_ctc(model, feats, max_steps, blank=0):
    model.eval()
    hyp = torch.zeros(feats.size(0), 0, dtype=torch.long, device=feats.device)
    state = None
    for _ in range(max_steps):
        logits, state = model.step(feats, state)
        tok = logits.argmax(-1, keepdim=True)
        hyp = torch.cat((hyp, tok), dim=1)  # expect: TL403
    return hyp[hyp != blank]


def pad_batch(seqs, max_len, pad_id):
    out = []
    for s in seqs:
        pad = torch.full((max_len - s.size(0),), pad_id, dtype=s.dtype)
        out.append(torch.cat([s, pad]))  # clean
    return torch.stack(out)


@torch.no_grad()
def out_of_fold(models, fold_loaders):
    oof = torch.empty(0)
    for model, loader in zip(models, fold_loaders):
        model.eval()
        preds = torch.cat([model(x) for x, _ in loader])  # clean
        oof = torch.cat((oof, preds), 0)  # expect: TL403
    return oof

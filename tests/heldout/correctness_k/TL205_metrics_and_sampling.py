"""TL205 probe: metric code and sampling. A multi-label metric wraps `torch.stack` of per-class
scores in `torch.tensor(...)`, a retrieval evaluator re-wraps the similarity matrix it computed
with `@` from normalized embeddings (`F.normalize` returns a tensor), a sampler re-wraps the
`torch.multinomial` draw, and a calibration helper a parameter annotated `torch.Tensor`; near misses
build tensors from Python lists of `.item()` values, from `.tolist()`, from a NumPy array, from a
list of floats computed in a per-sample loop, and use `torch.as_tensor` / `.clone().detach()`."""
import numpy as np
import torch
import torch.nn.functional as F


def per_class_f1(probs, targets, threshold=0.5):
    preds = (probs > threshold).float()
    scores = []
    for c in range(probs.size(1)):
        tp = (preds[:, c] * targets[:, c]).sum()
        denom = preds[:, c].sum() + targets[:, c].sum()
        scores.append(2 * tp / denom.clamp_min(1))
    f1 = torch.tensor(torch.stack(scores))  # expect: TL205
    return f1.mean(), f1


def per_class_f1_listed(probs, targets, threshold=0.5):
    preds = (probs > threshold).float()
    scores = []
    for c in range(probs.size(1)):
        tp = (preds[:, c] * targets[:, c]).sum()
        denom = preds[:, c].sum() + targets[:, c].sum()
        scores.append((2 * tp / denom.clamp_min(1)).item())
    f1 = torch.tensor(scores)  # clean
    return f1.mean(), f1


def recall_at_k(query_emb, gallery_emb, labels_q, labels_g, k=5):
    q = F.normalize(query_emb, dim=-1)
    g = F.normalize(gallery_emb, dim=-1)
    sim = torch.tensor(q @ g.T)  # expect: TL205
    topk = sim.topk(k, dim=1).indices
    hits = (labels_g[topk] == labels_q[:, None]).any(1)
    return hits.float().mean()


def sample_tokens(logits, temperature=1.0, n=4):
    probs = torch.softmax(logits / temperature, dim=-1)
    draws = torch.multinomial(probs, n, replacement=True)
    return torch.tensor(draws, dtype=torch.long)  # expect: TL205


def expected_calibration_error(confidences: torch.Tensor, correct, n_bins=15):
    conf = torch.tensor(confidences)  # expect: TL205
    edges = torch.linspace(0, 1, n_bins + 1)
    ece = torch.zeros(())
    for lo, hi in zip(edges[:-1], edges[1:]):
        in_bin = (conf > lo) & (conf <= hi)
        if in_bin.any():
            ece += in_bin.float().mean() * (conf[in_bin].mean() - correct[in_bin].float().mean()).abs()
    return ece


def dice_per_image(pred_masks, gt_masks):
    dices = []
    for i in range(pred_masks.size(0)):
        inter = (pred_masks[i] & gt_masks[i]).sum().item()
        total = pred_masks[i].sum().item() + gt_masks[i].sum().item()
        dices.append(2 * inter / max(total, 1))
    return torch.tensor(dices)  # clean


def to_tensor_metrics(ap_per_class: np.ndarray, ranks):
    ap = torch.tensor(ap_per_class)  # clean
    r = torch.tensor(ranks.tolist())  # clean
    return ap, r, torch.as_tensor(ranks), ranks.clone().detach()  # clean

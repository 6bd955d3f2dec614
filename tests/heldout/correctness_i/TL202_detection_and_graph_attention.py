"""TL202 probe: detection post-processing and graph attention. A DETR-style post-processor takes
`F.softmax(out_logits, dim=0)` of `[B, Q, C+1]` class logits (a shape comment says so: it
normalises each class over the images of the batch), a dense batched graph-attention layer takes
`.softmax(dim=0)` of `q @ k.transpose(1, 2)` (a `[B, N, N]` score tensor), and a semantic
segmentation head's per-pixel class probabilities come from `torch.softmax(logits, dim=0)` after
`B, C, H, W = logits.shape`; near misses are the softmax over dim 0 of one-dimensional tensors (a
cluster's IoU weights in weighted box fusion, BiFPN's learned per-level fusion weights, a sparse
GAT's edge scores of one neighbourhood) and Bahdanau attention over a sequence-first `[T, B]`
energy (normalising over time is the point)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


@torch.no_grad()
def detr_postprocess(outputs, target_sizes, threshold=0.7):
    out_logits = outputs["pred_logits"]  # [B, Q, C]
    out_boxes = outputs["pred_boxes"]  # [B, Q, 4]
    prob = F.softmax(out_logits, dim=0)  # expect: TL202
    scores, labels = prob[..., :-1].max(-1)
    img_h, img_w = target_sizes.unbind(1)
    scale = torch.stack([img_w, img_h, img_w, img_h], dim=1)
    cx, cy, w, h = out_boxes.unbind(-1)
    boxes = torch.stack([cx - 0.5 * w, cy - 0.5 * h, cx + 0.5 * w, cy + 0.5 * h], dim=-1) * scale[:, None, :]
    keep = scores > threshold
    return [{"scores": s[k], "labels": l[k], "boxes": b[k]} for s, l, b, k in zip(scores, labels, boxes, keep)]


class DenseGraphAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.scale = dim ** -0.5

    def forward(self, x, adj):
        scores = self.q(x) @ self.k(x).transpose(1, 2) * self.scale
        scores = scores.masked_fill(adj == 0, float("-inf"))
        attn = scores.softmax(dim=0)  # expect: TL202
        return attn @ self.v(x)


def segmentation_probs(logits):
    B, C, H, W = logits.shape
    probs = torch.softmax(logits, dim=0)  # expect: TL202
    return probs.argmax(1), probs.amax(1)


def weighted_box_fusion(cluster_boxes, ious, tau=0.1):
    w = torch.softmax(ious / tau, dim=0)  # clean
    return (w[:, None] * cluster_boxes).sum(0)


class FastFusion(nn.Module):
    def __init__(self, num_levels):
        super().__init__()
        self.level_weights = nn.Parameter(torch.ones(num_levels))

    def forward(self, feats):
        w = torch.softmax(self.level_weights, dim=0)  # clean
        return sum(wi * f for wi, f in zip(w, feats))


def neighbourhood_attention(h_center, h_neighbours):
    e = F.leaky_relu((h_neighbours * h_center).sum(-1), 0.2)
    alpha = F.softmax(e, dim=0)  # clean
    return (alpha[:, None] * h_neighbours).sum(0)


def bahdanau_context(encoder_out, energy):
    # encoder_out: [T, B, H], energy: [T, B]
    weights = F.softmax(energy, dim=0)  # clean
    return (weights.unsqueeze(-1) * encoder_out).sum(0)

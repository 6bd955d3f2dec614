"""TL203 probe: flattening a transposed `Linear` weight with `.t().view(-1)` for a weight-tying
check, a `swapaxes` result viewed through a variable, and `movedim(1, -1)` followed by a view
that merges the moved dim with its neighbours; the same `movedim` viewed as `(B, H * W, C)` is reported
too (it merges H and W, which stay in order: the view works only while `feats` is contiguous,
so `reshape` is the robust spelling); near misses are NumPy arrays (`.transpose()` then
`.view(np.uint8)` is a NumPy dtype view), a `.view(torch.int32)` reinterpretation of a float32
tensor (same element size: works on any strides), a permute followed by `.contiguous()` on another line, and `.view` before the transpose."""
import numpy as np
import torch
import torch.nn as nn


def tied_weight_distance(embedding: nn.Embedding, head: nn.Linear):
    flat = head.weight.t().view(-1)  # expect: TL203
    return (flat - embedding.weight.reshape(-1)).norm()


def frames_to_rows(frames):
    B, T, C = frames.shape
    rows = frames.swapaxes(1, 2)
    return rows.view(B * C, T)  # expect: TL203


def flat_channels_last(feats):
    B, C, H, W = feats.shape
    return feats.movedim(1, -1).view(B, -1)  # expect: TL203


def channels_last_tokens(feats):
    B, C, H, W = feats.shape
    return feats.movedim(1, -1).view(B, H * W, C)  # expect: TL203


def channels_last_tokens_v2(feats):
    B, C, H, W = feats.shape
    x = feats.permute(0, 2, 3, 1)
    x = x.contiguous()
    return x.view(B, H * W, C)  # clean


def split_then_swap(x, heads):
    B, N, D = x.shape
    return x.view(B, N, heads, D // heads).transpose(1, 2)  # clean


def image_bytes(path):
    arr = np.load(path)
    hwc = arr.transpose(1, 2, 0)
    return hwc.view(np.uint8)  # clean


def float_bits(x: torch.Tensor):
    return x.float().t().view(torch.int32)  # clean

"""TL706 and TL707 probe: a calibration-metrics module that imports `default_collate` through
the private `torch.utils.data._utils.collate` path inside a function (the import and its use),
and numerics written out by hand: `torch.log(x + 1)` (the `1 + x` form written the other way
round), `torch.exp(logits) - 1`, and a standardisation `x / torch.sqrt(var + eps)`; near misses
are `torch.log1p`, `torch.expm1`, `torch.rsqrt`, `math.log(1 + lr)` on a Python float, a log of a
sum of probabilities (not exponentials), and the public `torch.utils.data.default_collate`."""
import math

import torch
from torch.utils.data import default_collate


def batchify(samples):
    from torch.utils.data._utils.collate import default_collate as private_collate  # expect: TL706
    return private_collate(samples)  # expect: TL706


def batchify_public(samples):
    return default_collate(samples)  # clean


def log_counts(counts):
    return torch.log(counts + 1)  # expect: TL707


def log_counts_v2(counts):
    return torch.log1p(counts)  # clean


def relative_gain(logits):
    return torch.exp(logits) - 1  # expect: TL707


def relative_gain_v2(logits):
    return torch.expm1(logits)  # clean


def standardise(x, eps=1e-5):
    var = x.var(-1, keepdim=True, unbiased=False)
    return (x - x.mean(-1, keepdim=True)) / torch.sqrt(var + eps)  # expect: TL707


def standardise_v2(x, eps=1e-5):
    var = x.var(-1, keepdim=True, unbiased=False)
    return (x - x.mean(-1, keepdim=True)) * torch.rsqrt(var + eps)  # clean


def lr_decay_exponent(lr):
    return math.log(1 + lr)  # clean


def ensemble_log_prob(probs):
    return torch.log(probs.sum(0) / probs.size(0))  # clean

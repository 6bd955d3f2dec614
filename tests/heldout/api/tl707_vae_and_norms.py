"""TL707 probe: numerics in a VAE / flow toolkit: `torch.exp(logvar) - 1`, a softplus written as
`torch.log(1 + torch.exp(...))`, an RMS norm dividing by `torch.sqrt`, against a log with an
epsilon, `math.sqrt` scaling and `torch.log1p`."""
import math

import torch


def kl_term(mu, logvar):
    return 0.5 * (mu.pow(2) + torch.exp(logvar) - 1 - logvar).sum(dim=-1)  # clean


def scale_growth(log_scale):
    return torch.exp(log_scale) - 1  # expect: TL707


def softplus_margin(pos, neg, margin=0.2):
    return torch.log(1 + torch.exp(neg - pos + margin)).mean()  # expect: TL707


def rms_norm(x, weight, eps=1e-6):
    return x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight  # expect: TL707


def attention_scale(q, k):
    return q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))  # clean


def safe_entropy(p, eps=1e-8):
    return -(p * torch.log(p + eps)).sum(-1)  # clean


def log_one_plus(x):
    return torch.log1p(x)  # clean

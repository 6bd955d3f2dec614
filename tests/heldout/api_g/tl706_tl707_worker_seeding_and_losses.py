"""TL706 and TL707 probe: a data-pipeline module that seeds workers through the private
`torch.utils.data._utils.worker.get_worker_info` (imported by name: the import and its use), and
loss/metric code for a variational speech model with numerics written out by hand:
`torch.log(1 + rates)` for a Poisson-style log rate, `torch.exp(log_scale) - 1`,
`torch.log(torch.exp(scores).sum(-1))` for a log-partition, and `diff / torch.sqrt(var + eps)` for a
whitened residual; near misses are the public `torch.utils.data.get_worker_info`, `F.softplus`,
`torch.log(probs.sum(-1))` (a sum of probabilities, not of exponentials), a constant `math.log(1 +
eps)`, `torch.sqrt(var) / n` (the square root is the numerator), and `torch.logsumexp`."""
import math
import random

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import get_worker_info
from torch.utils.data._utils.worker import get_worker_info as private_worker_info  # expect: TL706


def seed_worker_legacy(worker_id):
    info = private_worker_info()  # expect: TL706
    np.random.seed(info.seed % 2**32)
    random.seed(info.seed)


def seed_worker(worker_id):
    info = get_worker_info()  # clean
    np.random.seed(info.seed % 2**32)


def log_rate(rates):
    return torch.log(1 + rates)  # expect: TL707


def log_rate_softplus(raw):
    return F.softplus(raw)  # clean


def scale_gain(log_scale):
    return torch.exp(log_scale) - 1  # expect: TL707


def log_partition(scores):
    return torch.log(torch.exp(scores).sum(-1))  # expect: TL707


def log_partition_stable(scores):
    return torch.logsumexp(scores, dim=-1)  # clean


def log_evidence(probs):
    return torch.log(probs.sum(-1))  # clean


def whiten(pred, target, var, eps=1e-5):
    diff = pred - target
    return diff / torch.sqrt(var + eps)  # expect: TL707


def stderr(var, n):
    return torch.sqrt(var) / n  # clean


def smoothing_constant(eps=1e-3):
    return math.log(1 + eps)  # clean

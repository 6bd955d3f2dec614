"""TL706 and TL707 probe: losses and attention written by hand in a contrastive/detection repo. The
collate function imports the private `default_collate` from `torch.utils.data._utils.collate` (the
import and its use) and the worker init reads `torch.utils.data._utils.worker.get_worker_info()`;
a softplus written as `torch.log(1 + torch.exp(-x))`, a log-partition written as
`torch.log(torch.sum(torch.exp(logits), dim=1))`, attention scores scaled with
`q @ k.transpose(-2, -1) / torch.sqrt(d)` and an exponential-growth term `torch.exp(r) - 1`;
near misses are the public `torch.utils.data.default_collate` / `get_worker_info`,
`torch.logsumexp`, a sum stabilised by subtracting the maximum first, `torch.log1p`,
`torch.expm1`, and a division by `math.sqrt(d)` of a Python int."""
import math

import torch
import torch.nn.functional as F
import torch.utils.data
from torch.utils.data._utils.collate import default_collate  # expect: TL706


def collate_with_meta(batch):
    metas = [b.pop("meta") for b in batch]
    return default_collate(batch), metas  # expect: TL706


def collate_public(batch):
    metas = [b.pop("meta") for b in batch]
    return torch.utils.data.default_collate(batch), metas  # clean


def seed_worker(worker_id):
    info = torch.utils.data._utils.worker.get_worker_info()  # expect: TL706
    torch.manual_seed(info.seed % 2 ** 31 + worker_id)


def seed_worker_public(worker_id):
    info = torch.utils.data.get_worker_info()  # clean
    torch.manual_seed(info.seed % 2 ** 31 + worker_id)


def logistic_loss(margins):
    return torch.log(1 + torch.exp(-margins)).mean()  # expect: TL707


def logistic_loss_stable(margins):
    return torch.log1p(torch.exp(-margins)).mean() + F.softplus(-margins).mean() * 0  # clean


def cross_entropy_by_hand(logits, target):
    log_z = torch.log(torch.sum(torch.exp(logits), dim=1))  # expect: TL707
    return (log_z - logits.gather(1, target[:, None]).squeeze(1)).mean()


def cross_entropy_stable(logits, target):
    m = logits.max(dim=1, keepdim=True).values
    log_z = m.squeeze(1) + torch.log(torch.sum(torch.exp(logits - m), dim=1))  # clean
    return (log_z - logits.gather(1, target[:, None]).squeeze(1)).mean(), torch.logsumexp(logits, 1)  # clean


def scaled_scores(q, k):
    d = torch.tensor(q.size(-1), dtype=q.dtype)
    return q @ k.transpose(-2, -1) / torch.sqrt(d)  # expect: TL707


def scaled_scores_math(q, k):
    return q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))  # clean


def growth(rate):
    return torch.exp(rate) - 1  # expect: TL707


def growth_stable(rate):
    return torch.expm1(rate)  # clean

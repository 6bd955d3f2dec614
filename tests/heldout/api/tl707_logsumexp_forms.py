"""TL707 probe: a contrastive-loss module with `torch.log(torch.sum(torch.exp(...)))` written out,
`torch.log(1 + x)` on a ratio, and a standardisation by `torch.sqrt(var)`, against
`torch.logsumexp`, `torch.rsqrt` and a log of a sum that is not of exponentials."""
import torch
import torch.nn.functional as F


def info_nce(z1, z2, tau=0.1):
    z1, z2 = F.normalize(z1, dim=-1), F.normalize(z2, dim=-1)
    sim = z1 @ z2.T / tau
    log_denominator = torch.log(torch.sum(torch.exp(sim), dim=1))  # expect: TL707
    return (log_denominator - sim.diagonal()).mean()


def info_nce_stable(z1, z2, tau=0.1):
    z1, z2 = F.normalize(z1, dim=-1), F.normalize(z2, dim=-1)
    sim = z1 @ z2.T / tau
    return (torch.logsumexp(sim, dim=1) - sim.diagonal()).mean()  # clean


def log_ratio(count, total):
    ratio = count / total
    return torch.log(1 + ratio)  # expect: TL707


def standardize(x, dim=0):
    var = x.var(dim=dim, keepdim=True, unbiased=False)
    return (x - x.mean(dim=dim, keepdim=True)) / torch.sqrt(var + 1e-5)  # expect: TL707


def standardize_v2(x, dim=0):
    var = x.var(dim=dim, keepdim=True, unbiased=False)
    return (x - x.mean(dim=dim, keepdim=True)) * torch.rsqrt(var + 1e-5)  # clean


def log_total_counts(counts):
    return torch.log(torch.sum(counts, dim=-1))  # clean

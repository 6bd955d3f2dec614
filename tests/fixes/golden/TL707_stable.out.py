import torch as th


def log_partition(logits, p, x, var):
    a = th.logsumexp(logits, dim=-1, keepdim=True)
    b = th.log1p(p)
    c = th.expm1(x)
    d = (x - x.mean()) * th.rsqrt(var + 1e-5)
    return a, b, c, d, th.rsqrt(var)

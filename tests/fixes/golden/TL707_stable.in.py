import torch as th


def log_partition(logits, p, x, var):
    a = th.log(th.sum(th.exp(logits), dim=-1, keepdim=True))
    b = th.log(1.0 + p)
    c = th.exp(x) - 1
    d = (x - x.mean()) / th.sqrt(var + 1e-5)
    return a, b, c, d, 1 / th.sqrt(var)

import torch


def projection(dim_in, dim_out):
    proj = torch.randn(dim_in, dim_out)
    return torch.tensor(proj) * dim_out ** -0.5


def as_half(chunks):
    emb = torch.cat(chunks)
    return torch.tensor(emb.detach(), dtype=torch.float16)


def summed(a, b):
    total = torch.cat([a, b])
    return torch.tensor(total + 1)

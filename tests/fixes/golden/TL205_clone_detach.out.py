import torch


def projection(dim_in, dim_out):
    proj = torch.randn(dim_in, dim_out)
    return proj.clone().detach() * dim_out ** -0.5


def as_half(chunks):
    emb = torch.cat(chunks)
    return emb.detach().clone().to(dtype=torch.float16)


def summed(a, b):
    total = torch.cat([a, b])
    return (total + 1).clone().detach()

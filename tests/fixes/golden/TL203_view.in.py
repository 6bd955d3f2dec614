import torch


def heads_to_channels(x):
    # x: [B, heads, N, d] -> [B, N, heads*d]
    B, h, N, d = x.shape
    return x.transpose(1, 2).view(B, N, h * d)

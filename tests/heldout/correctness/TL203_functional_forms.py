"""TL203 probe: `torch.transpose(x, 1, 2).view(...)` (functional form) merging the swapped dims, and
`x.mT.view(-1)`; near misses make it contiguous before viewing, use `torch.flatten`, or view a permuted
tensor only to split its last dim (`[B, C, N]` -> `[B, C, h, w]`, which works on a non-contiguous tensor)."""
import torch
import torch.nn as nn


def merge_time_freq(spec):
    B, C, T, F = spec.shape
    return torch.transpose(spec, 1, 2).view(B, T, C * F)  # expect: TL203


class TokenMixer(nn.Module):
    def __init__(self, tokens=196, dim=512):
        super().__init__()
        self.mix = nn.Conv1d(tokens, tokens, 1)

    def forward(self, x):
        B, N, C = x.shape
        x = x.permute(0, 2, 1)
        y = self.mix(x.contiguous().view(B * C, N, 1).squeeze(-1).view(B, C, N).permute(0, 2, 1))  # clean
        return y.reshape(B, N, C)


def patches_to_image(patches, h, w):
    B, N, C = patches.shape
    x = patches.permute(0, 2, 1)
    x = x.view(B, C, h, w)  # clean
    return x


def flatten_channels_last(x):
    x = x.permute(0, 2, 3, 1)
    return torch.flatten(x, 1)  # clean


def flat_gram(feats):
    return feats.mT.view(-1)  # expect: TL203

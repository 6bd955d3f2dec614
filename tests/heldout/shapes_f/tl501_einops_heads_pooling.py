"""TL501 probe: reshapes written by hand where einops would be used: a Perceiver-style latent array
split into heads with a width that does not divide, patch tokens folded back into a feature map of the
wrong grid, a graph readout stacking per-graph sums of different widths, and a masked mean over tokens
whose mask has the wrong length; against the correct folds, `einsum` with matching letters, a mask
broadcast with `unsqueeze(-1)`, and `-1` left for the checker to infer.
Each `case_*` function runs with torch (tests/shapes/test_definite_errors_runtime.py)."""
import torch
import torch.nn as nn


def case_latents_split_into_heads():
    latents = torch.randn(4, 64, 320)
    return latents.reshape(4, 64, 6, 64)  # expect: TL501


def case_latents_split_evenly():
    latents = torch.randn(4, 64, 320)
    heads = latents.reshape(4, 64, 5, -1).permute(0, 2, 1, 3)  # clean
    return torch.einsum("bhnd,bhmd->bhnm", heads, heads)  # clean


def case_tokens_back_to_grid():
    tokens = torch.randn(2, 196, 384)
    return tokens.transpose(1, 2).reshape(2, 384, 16, 16)  # expect: TL501


def case_tokens_back_to_grid_14():
    tokens = torch.randn(2, 196, 384)
    fmap = tokens.transpose(1, 2).reshape(2, 384, 14, 14)  # clean
    return nn.Conv2d(384, 256, kernel_size=1)(fmap)  # clean


def case_readout_of_unequal_graphs():
    node_h = torch.randn(50, 64)
    edge_h = torch.randn(120, 32)
    return torch.stack([node_h.sum(0), edge_h.sum(0)])  # expect: TL501


def case_readout_projected():
    node_h = torch.randn(50, 64)
    edge_h = nn.Linear(32, 64)(torch.randn(120, 32))
    return torch.stack([node_h.sum(0), edge_h.sum(0)])  # clean


def case_masked_mean_wrong_length():
    hidden = torch.randn(8, 128, 768)
    mask = torch.ones(8, 127)
    return (hidden * mask.unsqueeze(-1)).sum(1)  # expect: TL501


def case_masked_mean():
    hidden = torch.randn(8, 128, 768)
    mask = torch.ones(8, 128)
    summed = (hidden * mask.unsqueeze(-1)).sum(1)  # clean
    return summed / mask.sum(1, keepdim=True).clamp(min=1)  # clean

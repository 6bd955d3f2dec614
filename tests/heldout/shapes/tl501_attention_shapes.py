"""TL501 probe: attention written by hand: scores computed without transposing the keys,
heads split with a `view` whose element count differs from the input's, and an output
projection sized for the wrong width; against the correct transpose and reshape. Each `case_*`
function runs with torch (tests/shapes/test_definite_errors_runtime.py)."""
import torch
import torch.nn as nn


def case_scores_without_transpose():
    q = torch.randn(4, 128, 64)
    k = torch.randn(4, 128, 64)
    scores = q @ k  # expect: TL501
    return scores.softmax(dim=-1)


def case_scores_fixed():
    q = torch.randn(4, 128, 64)
    k = torch.randn(4, 128, 64)
    scores = q @ k.transpose(-2, -1) / 8.0  # clean
    return scores.softmax(dim=-1)


def case_split_heads():
    x = torch.randn(2, 50, 768)
    heads = x.view(2, 50, 8, 64)  # expect: TL501
    return heads.transpose(1, 2)


def case_split_heads_fixed():
    x = torch.randn(2, 50, 768)
    heads = x.reshape(2, 50, 12, 64).transpose(1, 2)  # clean
    return heads


def case_output_projection():
    attn_out = torch.randn(2, 50, 512)
    proj = nn.Linear(768, 768)
    return proj(attn_out)  # expect: TL501

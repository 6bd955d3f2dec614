"""TL501 probe: broadcasting and matmul chains in tabular, recommender and physics-style code: a
feature-wise scale vector of the raw width applied after one-hot expansion, a bilinear score
`u @ W @ v.T` with W transposed the wrong way, a low-rank update `A @ B` chained with the base weight
of the other orientation, batch statistics subtracted with `keepdim=False` over the feature axis, and a
Gram matrix of (B, C, HW) features against itself without a transpose; against `keepdim=True`,
`unsqueeze` for the pairwise distance trick, `mT` for the Gram matrix, and `einsum` for the bilinear form.
Each `case_*` function runs with torch (tests/shapes/test_definite_errors_runtime.py)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def case_scale_after_one_hot():
    cats = torch.randint(0, 5, (64, 3))
    nums = torch.randn(64, 4)
    x = torch.cat([F.one_hot(cats, 5).flatten(1).float(), nums], dim=1)
    scale = torch.ones(7)
    return x * scale  # expect: TL501


def case_scale_after_one_hot_full_width():
    cats = torch.randint(0, 5, (64, 3))
    nums = torch.randn(64, 4)
    x = torch.cat([F.one_hot(cats, 5).flatten(1).float(), nums], dim=1)
    scale = torch.ones(19)
    return x * scale  # clean


def case_bilinear_wrong_orientation():
    u = torch.randn(32, 64)
    v = torch.randn(100, 48)
    W = torch.randn(48, 64)
    return u @ W @ v.T  # expect: TL501


def case_bilinear():
    u = torch.randn(32, 64)
    v = torch.randn(100, 48)
    W = torch.randn(48, 64)
    chained = u @ W.T @ v.T  # clean
    return chained, torch.einsum("bi,ji,nj->bn", u, W, v)  # clean


def case_lora_delta_orientation():
    base = nn.Linear(512, 256)
    A = torch.randn(8, 512)
    B = torch.zeros(256, 8)
    delta = A.T @ B.T
    return base.weight + delta  # expect: TL501


def case_lora_delta():
    base = nn.Linear(512, 256)
    A = torch.randn(8, 512)
    B = torch.zeros(256, 8)
    return base.weight + B @ A  # clean


def case_center_without_keepdim():
    feats = torch.randn(128, 20)
    return feats - feats.mean(dim=1)  # expect: TL501


def case_center():
    feats = torch.randn(128, 20)
    centered = feats - feats.mean(dim=1, keepdim=True)  # clean
    return centered / feats.std(dim=0)  # clean


def case_gram_without_transpose():
    fmap = torch.randn(4, 64, 16, 16)
    f = fmap.flatten(2)
    return torch.bmm(f, f) / f.shape[-1]  # expect: TL501


def case_gram():
    fmap = torch.randn(4, 64, 16, 16)
    f = fmap.flatten(2)
    return torch.bmm(f, f.mT) / f.shape[-1]  # clean


def case_pairwise_distances():
    a = torch.randn(50, 3)
    b = torch.randn(70, 3)
    return ((a.unsqueeze(1) - b.unsqueeze(0)) ** 2).sum(-1)  # clean


def case_pairwise_distances_no_unsqueeze():
    a = torch.randn(50, 3)
    b = torch.randn(70, 3)
    return ((a - b) ** 2).sum(-1)  # expect: TL501

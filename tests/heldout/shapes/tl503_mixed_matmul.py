"""TL503 probe: integer tensors multiplied with floating ones (position indices `@` a float
table, a count matrix `mm` float weights) and a float index for `gather`; against casts to
float and `long()` indices. Each `case_*` function runs with torch
(tests/shapes/test_definite_errors_runtime.py)."""
import torch


def case_positions_matmul():
    positions = torch.arange(16).unsqueeze(1)
    freqs = torch.randn(1, 32)
    return positions @ freqs  # expect: TL503


def case_positions_matmul_fixed():
    positions = torch.arange(16).float().unsqueeze(1)
    freqs = torch.randn(1, 32)
    return positions @ freqs  # clean


def case_count_mm():
    counts = torch.randint(0, 5, (10, 20))
    weights = torch.randn(20, 3)
    return torch.mm(counts, weights)  # expect: TL503


def case_gather_float_index():
    scores = torch.randn(8, 100)
    picks = torch.rand(8, 1) * 100
    return scores.gather(1, picks)  # expect: TL503


def case_gather_long_index():
    scores = torch.randn(8, 100)
    picks = (torch.rand(8, 1) * 100).long()
    return scores.gather(1, picks)  # clean

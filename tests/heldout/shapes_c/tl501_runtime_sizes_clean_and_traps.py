"""TL501 probe: sizes only known at run time and layers built conditionally, which must stay
silent: a model configured from a dict whose head width depends on a flag, a `Linear` sized by
`len(vocab)` of a vocabulary read at run time, `nn.LazyLinear`, `view(-1, n)` on a
run-time batch, a residual projection created only when widths differ, broadcasting of a
(B, 1, T) mask over (B, H, T, T), and `torch.stack` of per-crop features of one size; with one
real contradiction among them: the residual shortcut skipped by mistake when the widths differ.
Each `case_*` function runs with torch (tests/shapes/test_definite_errors_runtime.py)."""
import random

import torch
import torch.nn as nn


class ResidualMLP(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d_in, d_out), nn.ReLU(), nn.Linear(d_out, d_out))
        self.shortcut = nn.Linear(d_in, d_out) if d_in != d_out else nn.Identity()

    def forward(self, x):
        return self.body(x) + self.shortcut(x)  # clean


class ResidualMLPNoShortcut(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d_in, d_out), nn.ReLU(), nn.Linear(d_out, d_out))

    def forward(self, x):
        return self.body(x) + x  # expect: TL501


def build_head(config):
    layers = [nn.Linear(config["d_model"], config["hidden"]), nn.GELU()]
    if config.get("use_norm"):
        layers.append(nn.LayerNorm(config["hidden"]))
    width = config["hidden"] * (2 if config.get("concat_pooled") else 1)
    layers.append(nn.Linear(width, config["n_labels"]))
    return nn.Sequential(*layers)


def case_residual_with_projection():
    return ResidualMLP(32, 64)(torch.randn(10, 32)) + ResidualMLP(64, 64)(torch.randn(10, 64))


def case_residual_without_projection():
    return ResidualMLPNoShortcut(32, 64)(torch.randn(10, 32))


def case_dict_configured_head():
    config = {"d_model": 128, "hidden": 64, "n_labels": 5, "use_norm": random.random() < 0.5}
    head = build_head(config)
    return head(torch.randn(4, 128))  # clean


def case_vocab_sized_at_runtime():
    vocab = sorted({random.choice("abcdefghij") for _ in range(50)})
    classifier = nn.Linear(len(vocab), 3)
    bag = torch.zeros(6, len(vocab))
    return classifier(bag)  # clean


def case_lazy_linear():
    head = nn.LazyLinear(10)
    feats = torch.randn(8, random.choice([100, 200]))
    return head(feats)  # clean


def case_runtime_batch_view():
    n = random.randint(2, 9)
    tokens = torch.randn(n * 12, 64)
    grouped = tokens.view(-1, 12, 64)  # clean
    return grouped.mean(1)


def case_mask_broadcast():
    B, H, T = 2, 4, 9
    scores = torch.randn(B, H, T, T)
    keep = torch.ones(B, 1, T, dtype=torch.bool)
    return scores.masked_fill(~keep.unsqueeze(1), -1e4)  # clean


def case_stack_crops():
    backbone = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2), nn.AdaptiveAvgPool2d(1), nn.Flatten())
    crops = [torch.randn(2, 3, s, s) for s in (64, 96, 128)]
    feats = torch.stack([backbone(c) for c in crops], dim=1)  # clean
    return feats.mean(1)

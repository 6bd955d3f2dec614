"""TL702 probe: linear probing and prompt tuning: `require_grad` typos on a classifier head
reached through a chained attribute, on a learned prompt tensor in `__init__`, and in a chained
assignment; near misses are the correct spelling, a config namespace field named
`require_grad` read from argparse (not assigned on a tensor), and `requires_grad_()`."""
import argparse

import torch
import torch.nn as nn


class PromptTuner(nn.Module):
    def __init__(self, backbone, n_prompts=16, dim=768):
        super().__init__()
        self.backbone = backbone
        self.prompts = torch.randn(n_prompts, dim) * 0.02
        self.prompts.require_grad = True  # expect: TL702
        self.head = nn.Linear(dim, 10)

    def forward(self, tokens):
        x = torch.cat([self.prompts.expand(tokens.size(0), -1, -1), tokens], dim=1)
        return self.head(self.backbone(x)[:, 0])


def linear_probe(model):
    for p in model.parameters():
        p.requires_grad = False  # clean
    model.backbone.head.weight.require_grad = True  # expect: TL702
    model.backbone.head.bias.requires_grad_(True)  # clean
    return [p for p in model.parameters() if p.requires_grad]


def freeze_norms(model):
    for m in model.modules():
        if isinstance(m, nn.LayerNorm):
            m.weight.require_grad = m.bias.require_grad = False  # expect: TL702


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--require-grad", dest="require_grad", action="store_true")
    args = parser.parse_args()
    if args.require_grad:  # clean
        print("training the backbone too")
    return args

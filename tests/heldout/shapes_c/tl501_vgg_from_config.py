"""TL501 probe: a VGG-style classifier configured from a dataclass, its feature extractor
built in a loop over a channel tuple into `nn.Sequential`, and the classifier's input size
computed from the config: one model forgets a pooling in that arithmetic, and a head sized for
32x32 images is fed 64x64 ones; against the right arithmetic, `AdaptiveAvgPool2d` + `flatten(1)`
(any resolution) and a head whose input size is read from a dummy forward at build time.
Each `case_*` function runs with torch (tests/shapes/test_definite_errors_runtime.py)."""
from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class VGGConfig:
    in_channels: int = 3
    image_size: int = 32
    channels: tuple = (64, 128, 256)
    num_classes: int = 10
    dropout: float = 0.1


def make_features(cfg: VGGConfig) -> nn.Sequential:
    layers = []
    c_in = cfg.in_channels
    for c_out in cfg.channels:
        layers += [nn.Conv2d(c_in, c_out, kernel_size=3, padding=1), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True)]
        layers.append(nn.MaxPool2d(2))
        c_in = c_out
    return nn.Sequential(*layers)


class VGG(nn.Module):
    def __init__(self, cfg: VGGConfig):
        super().__init__()
        self.features = make_features(cfg)
        side = cfg.image_size // 2 ** (len(cfg.channels) - 1)
        self.classifier = nn.Sequential(
            nn.Dropout(cfg.dropout),
            nn.Linear(cfg.channels[-1] * side * side, cfg.num_classes),
        )

    def forward(self, x):
        x = self.features(x)
        return self.classifier(x.flatten(1))  # expect: TL501


class VGGFixed(nn.Module):
    def __init__(self, cfg: VGGConfig):
        super().__init__()
        self.features = make_features(cfg)
        side = cfg.image_size // 2 ** len(cfg.channels)
        self.classifier = nn.Sequential(
            nn.Dropout(cfg.dropout),
            nn.Linear(cfg.channels[-1] * side * side, cfg.num_classes),
        )

    def forward(self, x):
        x = self.features(x)
        return self.classifier(x.flatten(1))  # clean


class VGGAnyResolution(nn.Module):
    def __init__(self, cfg: VGGConfig):
        super().__init__()
        self.features = make_features(cfg)
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.head = nn.Linear(cfg.channels[-1], cfg.num_classes)

    def forward(self, x):
        return self.head(torch.flatten(self.pool(self.features(x)), 1))  # clean


class VGGProbedHead(nn.Module):
    def __init__(self, cfg: VGGConfig):
        super().__init__()
        self.features = make_features(cfg)
        with torch.no_grad():
            dummy = torch.zeros(1, cfg.in_channels, cfg.image_size, cfg.image_size)
            n_flat = self.features(dummy).numel()
        self.head = nn.Linear(n_flat, cfg.num_classes)

    def forward(self, x):
        return self.head(self.features(x).view(x.size(0), -1))  # clean


def case_pooling_arithmetic():
    model = VGG(VGGConfig())
    return model(torch.randn(2, 3, 32, 32))


def case_pooling_arithmetic_fixed():
    model = VGGFixed(VGGConfig(num_classes=100))
    return model(torch.randn(2, 3, 32, 32))


def case_any_resolution():
    model = VGGAnyResolution(VGGConfig(channels=(32, 64)))
    return model(torch.randn(2, 3, 96, 80))


def case_probed_head():
    model = VGGProbedHead(VGGConfig(image_size=48))
    return model(torch.randn(5, 3, 48, 48))


def case_head_for_other_resolution():
    cfg = VGGConfig()
    features = make_features(cfg)
    head = nn.Linear(cfg.channels[-1] * (cfg.image_size // 8) ** 2, cfg.num_classes)
    images = torch.randn(4, 3, 64, 64)
    return head(features(images).flatten(1))  # expect: TL501

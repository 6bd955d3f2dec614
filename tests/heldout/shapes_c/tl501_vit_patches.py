"""TL501 probe: vision transformers and ConvNeXt-style blocks: a ViT whose position table is
sized for 224px images (196 patches + cls) while it is fed 384px images, patches cut with
`F.unfold` into a projection sized for one channel, and a channels-last `Linear` applied to a
channels-first feature map; against the right patch count computed from the config, the patch
conv with `flatten(2).transpose(1, 2)`, `expand` of the cls token, `permute(0, 2, 3, 1)`
before the `Linear`, and a sinusoidal table registered as a buffer and sliced to the length.
Each `case_*` function runs with torch (tests/shapes/test_definite_errors_runtime.py)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class PatchEmbed(nn.Module):
    def __init__(self, img_size=224, patch=16, in_chans=3, dim=192):
        super().__init__()
        self.n_patches = (img_size // patch) ** 2
        self.proj = nn.Conv2d(in_chans, dim, kernel_size=patch, stride=patch)

    def forward(self, x):
        return self.proj(x).flatten(2).transpose(1, 2)  # (B, N, D)  # clean


class TinyViT(nn.Module):
    def __init__(self, img_size=224, patch=16, dim=192, n_classes=100):
        super().__init__()
        self.patch_embed = PatchEmbed(img_size, patch, 3, dim)
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos = nn.Parameter(torch.zeros(1, self.patch_embed.n_patches + 1, dim))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, n_classes)

    def forward(self, images):
        x = self.patch_embed(images)
        cls = self.cls.expand(x.size(0), -1, -1)  # clean
        x = torch.cat([cls, x], dim=1) + self.pos  # expect: TL501
        return self.head(self.norm(x[:, 0]))


def case_vit_tokens_from_config():
    img_size, patch, dim = 384, 16, 192
    embed = PatchEmbed(img_size, patch, 3, dim)
    pos = torch.zeros(1, embed.n_patches + 1, dim)
    x = embed(torch.randn(2, 3, img_size, img_size))
    cls = torch.zeros(1, 1, dim).expand(x.size(0), -1, -1)
    return torch.cat([cls, x], dim=1) + pos  # clean


def case_vit_at_higher_resolution():
    return TinyViT(img_size=224)(torch.randn(2, 3, 384, 384))


def case_unfold_patches_into_gray_projection():
    images = torch.randn(4, 3, 32, 32)
    patches = F.unfold(images, kernel_size=8, stride=8).transpose(1, 2)   # (B, 16, 3*64)
    proj = nn.Linear(8 * 8, 128)
    return proj(patches)  # expect: TL501


def case_unfold_patches():
    images = torch.randn(4, 3, 32, 32)
    patches = F.unfold(images, kernel_size=8, stride=8).transpose(1, 2)
    return nn.Linear(3 * 8 * 8, 128)(patches)  # clean


class ConvNeXtBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dw = nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.pw1 = nn.Linear(dim, 4 * dim)
        self.pw2 = nn.Linear(4 * dim, dim)
        self.gamma = nn.Parameter(1e-6 * torch.ones(dim))

    def forward(self, x):
        shortcut = x
        x = self.dw(x).permute(0, 2, 3, 1)                  # (B, H, W, C)
        x = self.pw2(F.gelu(self.pw1(self.norm(x))))  # clean
        return shortcut + (self.gamma * x).permute(0, 3, 1, 2)  # clean


def case_convnext_block():
    return ConvNeXtBlock(96)(torch.randn(2, 96, 14, 14))


def case_pointwise_linear_on_channels_first():
    feats = torch.randn(2, 96, 14, 14)
    pw = nn.Linear(96, 384)
    return pw(feats)  # expect: TL501


class SinusoidalPositions(nn.Module):
    def __init__(self, dim, max_len=512):
        super().__init__()
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, dim, 2) * (-math.log(10000.0) / dim))
        pe = torch.zeros(max_len, dim)
        pe[:, 0::2] = torch.sin(position * div_term)  # clean
        pe[:, 1::2] = torch.cos(position * div_term)  # clean
        self.register_buffer("pe", pe.unsqueeze(0))

    def forward(self, x):
        return x + self.pe[:, : x.size(1)]  # clean


def case_sinusoidal_positions():
    return SinusoidalPositions(64)(torch.randn(3, 37, 64))

"""TL501 probe: ViT patch embeddings and MAE-style unpatchify: a position table sized for the class
token added before the class token is concatenated, a class token concatenated along the wrong dim,
an unpatchify that reshapes 196 patches of 16x16x3 values as a 16x16 grid, a patch projection
`Linear` sized for 8x8 patches fed 16x16 ones, and a non-square image whose patch grid is taken as
square; against the order that works, the right concat dim, `h = w = int(n ** 0.5)`, the patch
size worked out from the config, and a rectangular grid computed from both sides.
Each `case_*` function runs with torch (tests/shapes/test_definite_errors_runtime.py)."""
import torch
import torch.nn as nn


class PatchEmbed(nn.Module):
    def __init__(self, img_size=224, patch=16, dim=768):
        super().__init__()
        self.proj = nn.Conv2d(3, dim, kernel_size=patch, stride=patch)
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos = nn.Parameter(torch.zeros(1, (img_size // patch) ** 2 + 1, dim))

    def forward(self, x):
        x = self.proj(x).flatten(2).transpose(1, 2)
        x = x + self.pos  # expect: TL501
        return torch.cat([self.cls.expand(x.size(0), -1, -1), x], dim=1)


class PatchEmbedClsFirst(nn.Module):
    def __init__(self, img_size=224, patch=16, dim=768):
        super().__init__()
        self.proj = nn.Conv2d(3, dim, kernel_size=patch, stride=patch)
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos = nn.Parameter(torch.zeros(1, (img_size // patch) ** 2 + 1, dim))

    def forward(self, x):
        x = self.proj(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.size(0), -1, -1), x], dim=1)
        return x + self.pos  # clean


def case_pos_added_before_cls():
    return PatchEmbed()(torch.randn(2, 3, 224, 224))


def case_pos_added_after_cls():
    return PatchEmbedClsFirst()(torch.randn(2, 3, 224, 224))


def case_cls_token_wrong_dim():
    tokens = torch.randn(2, 196, 768)
    cls = torch.zeros(1, 1, 768).expand(2, -1, -1)
    return torch.cat([cls, tokens], dim=2)  # expect: TL501


def case_cls_token_sequence_dim():
    tokens = torch.randn(2, 196, 768)
    cls = torch.zeros(1, 1, 768).expand(2, -1, -1)
    return torch.cat([cls, tokens], dim=1)  # clean


def case_unpatchify_wrong_grid():
    pred = torch.randn(4, 196, 16 * 16 * 3)
    return pred.reshape(4, 16, 16, 16, 16, 3)  # expect: TL501


def case_unpatchify():
    pred = torch.randn(4, 196, 16 * 16 * 3)
    n = pred.shape[1]
    h = w = int(n ** 0.5)
    x = pred.reshape(4, h, w, 16, 16, 3)  # clean
    x = torch.einsum("nhwpqc->nchpwq", x)
    return x.reshape(4, 3, h * 16, w * 16)  # clean


def case_patch_projection_for_8x8():
    images = torch.randn(2, 3, 64, 64)
    patches = images.unfold(2, 16, 16).unfold(3, 16, 16)
    patches = patches.permute(0, 2, 3, 1, 4, 5).reshape(2, 16, 3 * 16 * 16)
    proj = nn.Linear(3 * 8 * 8, 256)
    return proj(patches)  # expect: TL501


def case_patch_projection():
    images = torch.randn(2, 3, 64, 64)
    patch = 16
    patches = images.unfold(2, patch, patch).unfold(3, patch, patch)
    patches = patches.permute(0, 2, 3, 1, 4, 5).reshape(2, 16, 3 * patch * patch)
    proj = nn.Linear(3 * patch * patch, 256)
    return proj(patches)  # clean


def case_rectangular_grid_taken_square():
    proj = nn.Conv2d(3, 192, kernel_size=16, stride=16)
    tokens = proj(torch.randn(1, 3, 224, 320)).flatten(2).transpose(1, 2)
    return tokens.reshape(1, 14, 14, 192)  # expect: TL501


def case_rectangular_grid():
    proj = nn.Conv2d(3, 192, kernel_size=16, stride=16)
    fmap = proj(torch.randn(1, 3, 224, 320))
    gh, gw = fmap.shape[-2:]
    tokens = fmap.flatten(2).transpose(1, 2)
    return tokens.reshape(1, gh, gw, 192)  # clean

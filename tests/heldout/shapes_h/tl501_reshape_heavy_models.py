"""TL501 probe: reshape-heavy code where einops would be used, written with view/permute by hand: a
pixel-shuffle upsampler folding 4x the channels into a 2x grid with the wrong factor, a window partition
of a 14x14 map into 8x8 windows, a Mixer token-mixing MLP sized for the channel axis after transposing,
and a temporal-shift video model folding (B*T) back with the wrong T; against `F.pixel_shuffle`, windows
that tile the map, token-mixing sized for the patch count, and `unflatten` with the right T.
Each `case_*` function runs with torch (tests/shapes/test_definite_errors_runtime.py)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def case_pixel_shuffle_by_hand_wrong_factor():
    x = torch.randn(2, 4 * 32, 16, 16)
    return x.view(2, 32, 3, 3, 16, 16)  # expect: TL501


def case_pixel_shuffle_by_hand():
    x = torch.randn(2, 4 * 32, 16, 16)
    y = x.view(2, 32, 2, 2, 16, 16).permute(0, 1, 4, 2, 5, 3).reshape(2, 32, 32, 32)  # clean
    return y, F.pixel_shuffle(x, 2)  # clean


def case_window_partition_not_tiling():
    fmap = torch.randn(2, 14, 14, 96)
    return fmap.view(2, 14 // 8, 8, 14 // 8, 8, 96)  # expect: TL501


def case_window_partition():
    fmap = torch.randn(2, 14, 14, 96)
    windows = fmap.view(2, 2, 7, 2, 7, 96).permute(0, 1, 3, 2, 4, 5).reshape(-1, 49, 96)  # clean
    return windows


class MixerBlock(nn.Module):
    def __init__(self, n_patches, dim, token_hidden=256, channel_hidden=1024):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.token_mlp = nn.Sequential(nn.Linear(n_patches, token_hidden), nn.GELU(), nn.Linear(token_hidden, n_patches))
        self.norm2 = nn.LayerNorm(dim)
        self.channel_mlp = nn.Sequential(nn.Linear(dim, channel_hidden), nn.GELU(), nn.Linear(channel_hidden, dim))

    def forward(self, x):
        x = x + self.token_mlp(self.norm1(x).transpose(1, 2)).transpose(1, 2)  # clean
        return x + self.channel_mlp(self.norm2(x))  # clean


def case_mixer_block():
    return MixerBlock(196, 512)(torch.randn(2, 196, 512))


def case_mixer_token_mlp_untransposed():
    token_mlp = nn.Sequential(nn.Linear(196, 256), nn.GELU(), nn.Linear(256, 196))
    x = torch.randn(2, 196, 512)
    return token_mlp(nn.LayerNorm(512)(x))  # expect: TL501


def case_video_fold_wrong_t():
    B, T = 2, 8
    frames = torch.randn(B * T, 256, 7, 7)
    pooled = frames.mean((2, 3))
    return pooled.view(B, 16, 256)  # expect: TL501


def case_video_fold():
    B, T = 2, 8
    frames = torch.randn(B * T, 256, 7, 7)
    pooled = frames.mean((2, 3)).unflatten(0, (B, T))  # clean
    return pooled.mean(1)


def case_heads_split_reshape():
    x = torch.randn(4, 50, 768)
    heads = x.reshape(4, 50, 12, 64).permute(0, 2, 1, 3)  # clean
    merged = heads.permute(0, 2, 1, 3).reshape(4, 50, 12 * 64)  # clean
    return merged.reshape(4, 50, 12, 48)  # expect: TL501

"""TL501 probe: layers fed the wrong axis, as sequence and detection code gets it wrong:
`BatchNorm1d(C)` applied to a (B, T, C) sequence (it normalises dim 1), a `Conv1d` over
features given (B, T, F) without the transpose, `nn.MultiheadAttention` of width 256 fed
512-wide queries, a `LayerNorm` sized for the head width, and an FPN top-down path that
upsamples an odd-sized level by `scale_factor=2` and adds it to the lateral; against the
transposed forms, `kdim`/`vdim` for memory of another width, `LayerNorm` over the last dim,
and `F.interpolate(size=lateral.shape[-2:])`.
Each `case_*` function runs with torch (tests/shapes/test_definite_errors_runtime.py)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TemporalBlock(nn.Module):
    def __init__(self, n_features=40, channels=64):
        super().__init__()
        self.conv = nn.Conv1d(n_features, channels, kernel_size=5, padding=2)
        self.norm = nn.BatchNorm1d(channels)

    def forward(self, x):                      # x: (B, T, F)
        h = self.conv(x.transpose(1, 2))       # (B, C, T)  # clean
        h = F.relu(self.norm(h))               # clean
        return h.transpose(1, 2)               # (B, T, C)


def case_temporal_block():
    return TemporalBlock()(torch.randn(8, 100, 40))


def case_conv_over_time_without_transpose():
    conv = nn.Conv1d(40, 64, kernel_size=5, padding=2)
    frames = torch.randn(8, 100, 40)
    return conv(frames)  # expect: TL501


def case_batchnorm_over_sequence():
    tokens = torch.randn(16, 50, 128)
    norm = nn.BatchNorm1d(128)
    return norm(tokens)  # expect: TL501


def case_batchnorm_over_sequence_fixed():
    tokens = torch.randn(16, 50, 128)
    norm = nn.BatchNorm1d(128)
    flat = norm(tokens.reshape(-1, 128)).view(16, 50, 128)  # clean
    return flat + norm(tokens.transpose(1, 2)).transpose(1, 2)  # clean


def case_mha_width():
    attn = nn.MultiheadAttention(embed_dim=256, num_heads=8, batch_first=True)
    x = torch.randn(4, 20, 512)
    return attn(x, x, x)  # expect: TL501


def case_mha_memory_of_other_width():
    attn = nn.MultiheadAttention(embed_dim=256, num_heads=8, kdim=512, vdim=512, batch_first=True)
    queries = torch.randn(4, 20, 256)
    memory = torch.randn(4, 64, 512)
    out, weights = attn(queries, memory, memory, need_weights=True)  # clean
    return out, weights


def case_layernorm_on_head_width():
    x = torch.randn(2, 8, 10, 64)             # (B, heads, T, head_dim)
    norm = nn.LayerNorm(512)
    return norm(x)  # expect: TL501


def case_layernorm_last_dims():
    x = torch.randn(2, 10, 8, 64)
    return nn.LayerNorm([8, 64])(x) + nn.LayerNorm(64)(x)  # clean


class TopDown(nn.Module):
    def __init__(self, channels=256):
        super().__init__()
        self.lateral = nn.Conv2d(512, channels, kernel_size=1)
        self.smooth = nn.Conv2d(channels, channels, kernel_size=3, padding=1)

    def forward(self, top, c4):
        lateral = self.lateral(c4)
        up = F.interpolate(top, size=lateral.shape[-2:], mode="nearest")  # clean
        return self.smooth(lateral + up)  # clean


def case_top_down_by_size():
    return TopDown()(torch.randn(1, 256, 13, 13), torch.randn(1, 512, 25, 25))


def case_top_down_by_scale_factor():
    lateral_conv = nn.Conv2d(512, 256, kernel_size=1)
    c4 = torch.randn(1, 512, 25, 25)
    top = torch.randn(1, 256, 13, 13)
    up = F.interpolate(top, scale_factor=2, mode="nearest")
    return lateral_conv(c4) + up  # expect: TL501

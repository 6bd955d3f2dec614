"""TL501 probe, mostly near misses: size arithmetic a static checker can get wrong, all of it
correct here: `ceil_mode=True` pooling, a transposed conv with `output_padding`, `padding="same"`
/`"valid"`, `F.pad` before a conv, `scale_factor=0.5` on an odd size, strided slices, list
indexing, GLU halves, rotary pairs flattened back, `squeeze(1)` of a known size 1, `Unflatten`
in a decoder, `GroupNorm`, broadcast `torch.where`; and two real bugs beside them: a causal TCN
residual that keeps the conv's left padding, and a GLU's output fed to a `Linear` of the full
width. Each `case_*` function runs with torch (tests/shapes/test_definite_errors_runtime.py)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def case_ceil_mode_pooling():
    x = torch.randn(2, 16, 25, 25)
    pooled = nn.MaxPool2d(2, ceil_mode=True)(x)                 # 13 x 13
    return nn.Linear(16 * 13 * 13, 10)(pooled.flatten(1))  # clean


def case_transposed_conv_output_padding():
    deep = torch.randn(2, 64, 13, 13)
    skip = torch.randn(2, 32, 26, 26)
    up = nn.ConvTranspose2d(64, 32, kernel_size=3, stride=2, padding=1, output_padding=1)(deep)
    return torch.cat([up, skip], dim=1)  # clean


def case_same_and_valid_padding():
    x = torch.randn(2, 3, 31, 29)
    same = nn.Conv2d(3, 8, kernel_size=5, padding="same")(x)
    valid = nn.Conv2d(3, 8, kernel_size=5, padding="valid")(x)        # 27 x 25
    return same[:, :, 2:-2, 2:-2] + valid  # clean


def case_pad_then_conv():
    x = torch.randn(2, 8, 15, 15)
    x = F.pad(x, (0, 1, 0, 1))                                       # 16 x 16
    y = nn.Conv2d(8, 8, kernel_size=2, stride=2)(x)                   # 8 x 8
    return nn.Linear(8 * 8 * 8, 4)(y.flatten(1))  # clean


def case_half_scale_on_odd_size():
    x = torch.randn(1, 4, 25, 25)
    small = F.interpolate(x, scale_factor=0.5, mode="bilinear", align_corners=False)   # 12 x 12
    return small + torch.zeros(1, 4, 12, 12)  # clean


def case_strided_and_list_indexing():
    feats = torch.randn(8, 20, 64)
    even = feats[:, :, ::2]                                              # 32
    picked = feats[:, [0, 5, 19]]                                        # (8, 3, 64)
    return nn.Linear(32, 4)(even), nn.Linear(64, 4)(picked)  # clean


class GLUFeedForward(nn.Module):
    def __init__(self, dim=128, hidden=512):
        super().__init__()
        self.up = nn.Linear(dim, 2 * hidden)
        self.down = nn.Linear(hidden, dim)

    def forward(self, x):
        a, gate = self.up(x).chunk(2, dim=-1)
        return self.down(a * F.silu(gate))  # clean


class GLUWrongWidth(nn.Module):
    def __init__(self, dim=128, hidden=512):
        super().__init__()
        self.up = nn.Linear(dim, 2 * hidden)
        self.down = nn.Linear(2 * hidden, dim)

    def forward(self, x):
        h = F.glu(self.up(x), dim=-1)
        return self.down(h)  # expect: TL501


def case_glu():
    return GLUFeedForward()(torch.randn(2, 7, 128))


def case_glu_wrong_width():
    return GLUWrongWidth()(torch.randn(2, 7, 128))


def rotate_half_pairs(x):
    x = x.reshape(*x.shape[:-1], -1, 2)
    x1, x2 = x.unbind(-1)
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


def case_rotary_pairs():
    q = torch.randn(2, 4, 10, 32)
    cos = torch.randn(10, 32)
    sin = torch.randn(10, 32)
    return q * cos + rotate_half_pairs(q) * sin  # clean


def case_squeeze_known_one():
    scores = nn.Linear(64, 1)(torch.randn(8, 30, 64)).squeeze(-1)     # (8, 30)
    weights = scores.softmax(dim=-1).unsqueeze(1)                     # (8, 1, 30)
    return torch.bmm(weights, torch.randn(8, 30, 64)).squeeze(1)  # clean


def case_decoder_unflatten_groupnorm():
    decoder = nn.Sequential(
        nn.Linear(32, 64 * 7 * 7), nn.Unflatten(1, (64, 7, 7)),
        nn.ConvTranspose2d(64, 32, 4, stride=2, padding=1), nn.GroupNorm(8, 32), nn.SiLU(),
        nn.ConvTranspose2d(32, 1, 4, stride=2, padding=1),
    )
    return decoder(torch.randn(5, 32)) + torch.zeros(5, 1, 28, 28)  # clean


def case_where_broadcast():
    valid = torch.rand(6, 1) > 0.5
    x = torch.randn(6, 40)
    return torch.where(valid, x, x.new_zeros(()))  # clean


class CausalBlock(nn.Module):
    def __init__(self, channels=32, kernel_size=3, dilation=4):
        super().__init__()
        self.chomp = (kernel_size - 1) * dilation
        self.conv = nn.Conv1d(channels, channels, kernel_size, padding=self.chomp, dilation=dilation)

    def forward(self, x):
        y = self.conv(x)[:, :, :-self.chomp]
        return F.relu(y) + x  # clean


class CausalBlockUnchomped(nn.Module):
    def __init__(self, channels=32, kernel_size=3, dilation=4):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, kernel_size, padding=(kernel_size - 1) * dilation,
                              dilation=dilation)

    def forward(self, x):
        return F.relu(self.conv(x)) + x  # expect: TL501


def case_causal_block():
    return CausalBlock()(torch.randn(4, 32, 100))


def case_causal_block_unchomped():
    return CausalBlockUnchomped()(torch.randn(4, 32, 100))

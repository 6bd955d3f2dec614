"""TL501 probe: U-Net skip connections with down and up sampling: an odd input size (63) whose
max-pooled then transposed-convolved map comes back one pixel short of its skip, a decoder conv
sized for the upsampled channels only (not upsampled + skip), a bottleneck that upsamples with
`scale_factor=4` after pooling only once, and a 1-D U-Net over audio whose skip is concatenated on
the time axis; against `interpolate(size=skip.shape[-2:])`, the
concatenated channel count in the decoder conv, and concatenation on the channel dim.
Each `case_*` function runs with torch (tests/shapes/test_definite_errors_runtime.py)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def double_conv(c_in, c_out):
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, padding=1), nn.ReLU(),
                         nn.Conv2d(c_out, c_out, 3, padding=1), nn.ReLU())


class TinyUNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Conv2d(3, 32, 3, padding=1)
        self.mid = nn.Conv2d(32, 64, 3, padding=1)
        self.up = nn.ConvTranspose2d(64, 32, 2, stride=2)
        self.dec = nn.Conv2d(64, 32, 3, padding=1)

    def forward(self, x):
        skip = F.relu(self.enc(x))
        h = F.relu(self.mid(F.max_pool2d(skip, 2)))
        h = self.up(h)
        return self.dec(torch.cat([h, skip], dim=1))  # expect: TL501


class TinyUNetResized(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Conv2d(3, 32, 3, padding=1)
        self.mid = nn.Conv2d(32, 64, 3, padding=1)
        self.up = nn.ConvTranspose2d(64, 32, 2, stride=2)
        self.dec = nn.Conv2d(64, 32, 3, padding=1)

    def forward(self, x):
        skip = F.relu(self.enc(x))
        h = F.relu(self.mid(F.max_pool2d(skip, 2)))
        h = F.interpolate(self.up(h), size=skip.shape[-2:])
        return self.dec(torch.cat([h, skip], dim=1))  # clean


def case_odd_input_skip_short():
    return TinyUNet()(torch.randn(1, 3, 63, 63))


def case_odd_input_resized():
    return TinyUNetResized()(torch.randn(1, 3, 63, 63))


def case_decoder_conv_ignores_skip_channels():
    skip = torch.randn(2, 64, 32, 32)
    bottom = torch.randn(2, 128, 16, 16)
    up = nn.ConvTranspose2d(128, 64, kernel_size=2, stride=2)
    dec = double_conv(64, 64)
    return dec(torch.cat([up(bottom), skip], dim=1))  # expect: TL501


def case_decoder_conv_takes_both():
    skip = torch.randn(2, 64, 32, 32)
    bottom = torch.randn(2, 128, 16, 16)
    up = nn.ConvTranspose2d(128, 64, kernel_size=2, stride=2)
    dec = double_conv(128, 64)
    return dec(torch.cat([up(bottom), skip], dim=1))  # clean


def case_upsample_too_far():
    skip = torch.randn(2, 32, 40, 40)
    bottom = F.max_pool2d(skip, 2)
    up = F.interpolate(bottom, scale_factor=4, mode="nearest")
    return torch.cat([up, skip], dim=1)  # expect: TL501


def case_upsample_back():
    skip = torch.randn(2, 32, 40, 40)
    bottom = F.max_pool2d(skip, 2)
    up = F.interpolate(bottom, scale_factor=2, mode="nearest")
    return torch.cat([up, skip], dim=1)  # clean


def case_audio_unet_time_axis():
    wave = torch.randn(4, 1, 8000)
    down = nn.Conv1d(1, 16, kernel_size=4, stride=2, padding=1)
    up = nn.ConvTranspose1d(16, 16, kernel_size=4, stride=2, padding=1)
    skip = nn.Conv1d(1, 16, kernel_size=3, padding=1)(wave)
    merged = torch.cat([up(down(wave)), skip], dim=2)
    head = nn.Conv1d(32, 1, kernel_size=1)
    return head(merged)  # expect: TL501


def case_audio_unet_channel_axis():
    wave = torch.randn(4, 1, 8000)
    down = nn.Conv1d(1, 16, kernel_size=4, stride=2, padding=1)
    up = nn.ConvTranspose1d(16, 16, kernel_size=4, stride=2, padding=1)
    skip = nn.Conv1d(1, 16, kernel_size=3, padding=1)(wave)
    merged = torch.cat([up(down(wave)), skip], dim=1)
    head = nn.Conv1d(32, 1, kernel_size=1)
    return head(merged)  # clean

"""TL501 probe: U-Net decoders that concatenate encoder skips: a decoder block whose conv is
sized for the upsampled channels only (the skip's channels forgotten after `torch.cat`), and an
odd input size (25x25) whose pooled-then-transposed-conv features come back one pixel short of
the skip; against blocks that count the skip channels, `F.interpolate(size=skip.shape[-2:])`
before the concatenation, and a bilinear `scale_factor` upsampling on even sizes.
Each `case_*` function runs with torch (tests/shapes/test_definite_errors_runtime.py)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def double_conv(c_in, c_out):
    return nn.Sequential(
        nn.Conv2d(c_in, c_out, 3, padding=1, bias=False),
        nn.BatchNorm2d(c_out),
        nn.ReLU(inplace=True),
        nn.Conv2d(c_out, c_out, 3, padding=1, bias=False),
        nn.BatchNorm2d(c_out),
        nn.ReLU(inplace=True),
    )


class Up(nn.Module):
    def __init__(self, c_in, c_skip, c_out):
        super().__init__()
        self.up = nn.ConvTranspose2d(c_in, c_in // 2, kernel_size=2, stride=2)
        self.conv = double_conv(c_in // 2 + c_skip, c_out)

    def forward(self, x, skip):
        x = self.up(x)
        x = F.interpolate(x, size=skip.shape[-2:], mode="nearest")  # clean
        return self.conv(torch.cat([skip, x], dim=1))  # clean


class UpForgetsSkip(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.up = nn.ConvTranspose2d(c_in, c_out, kernel_size=2, stride=2)
        self.conv = double_conv(c_out, c_out)

    def forward(self, x, skip):
        x = torch.cat([self.up(x), skip], dim=1)
        return self.conv(x)  # expect: TL501


class TinyUNet(nn.Module):
    def __init__(self, in_channels=1, n_classes=2, base=16):
        super().__init__()
        self.enc1 = double_conv(in_channels, base)
        self.enc2 = double_conv(base, base * 2)
        self.bottleneck = double_conv(base * 2, base * 4)
        self.up2 = Up(base * 4, base * 2, base * 2)
        self.up1 = Up(base * 2, base, base)
        self.head = nn.Conv2d(base, n_classes, kernel_size=1)

    def forward(self, x):
        s1 = self.enc1(x)
        s2 = self.enc2(F.max_pool2d(s1, 2))
        b = self.bottleneck(F.max_pool2d(s2, 2))
        return self.head(self.up1(self.up2(b, s2), s1))  # clean


def case_skip_channels_forgotten():
    up = UpForgetsSkip(64, 32)
    deep = torch.randn(2, 64, 8, 8)
    skip = torch.randn(2, 32, 16, 16)
    return up(deep, skip)


def case_unet_odd_size_with_interpolate():
    model = TinyUNet(in_channels=1, n_classes=3)
    return model(torch.randn(2, 1, 25, 25))


def case_odd_size_without_interpolate():
    skip = torch.randn(1, 32, 25, 25)
    up = nn.ConvTranspose2d(64, 32, kernel_size=2, stride=2)
    deep = torch.randn(1, 64, 12, 12)
    return torch.cat([up(deep), skip], dim=1)  # expect: TL501


def case_bilinear_decoder():
    feats = torch.randn(4, 128, 16, 16)
    skip = torch.randn(4, 64, 32, 32)
    up = F.interpolate(feats, scale_factor=2, mode="bilinear", align_corners=False)
    fused = torch.cat((up, skip), 1)  # clean
    return nn.Conv2d(192, 64, 3, padding=1)(fused)  # clean

"""TL501 probe: conv/pool arithmetic as small CNNs write it by hand: a LeNet-style head whose flatten
size assumes 'same' padding after unpadded 5x5 convs, a strided 1-D audio frontend whose `Linear` expects
the unstrided length, a max-pool that halves a 7x7 map to 3x3 while the head expects 4x4, channels that
do not match after a depthwise-separable block, and a `BatchNorm2d` sized for the wrong stage; against
the sizes computed right, `AdaptiveAvgPool2d` that fixes the head's input, `nn.LazyLinear`, and
`flatten(1)` into a `Linear` whose size is worked out correctly.
Each `case_*` function runs with torch (tests/shapes/test_definite_errors_runtime.py)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class LeNetSame(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 7 * 7, 120)
        self.fc2 = nn.Linear(120, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        return self.fc2(F.relu(self.fc1(x)))  # expect: TL501


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 4 * 4, 120)
        self.fc2 = nn.Linear(120, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        return self.fc2(F.relu(self.fc1(x)))  # clean


def case_lenet_same_padding_assumed():
    return LeNetSame()(torch.randn(8, 1, 28, 28))


def case_lenet():
    return LeNet()(torch.randn(8, 1, 28, 28))


def case_strided_audio_frontend():
    frontend = nn.Sequential(nn.Conv1d(1, 32, kernel_size=400, stride=160), nn.GELU())
    head = nn.Linear(16000, 10)
    wave = torch.randn(4, 1, 16000)
    feats = frontend(wave)
    return head(feats.mean(1))  # expect: TL501


def case_strided_audio_frontend_frames():
    frontend = nn.Sequential(nn.Conv1d(1, 32, kernel_size=400, stride=160), nn.GELU())
    head = nn.Linear(32, 10)
    wave = torch.randn(4, 1, 16000)
    feats = frontend(wave)
    return head(feats.mean(-1))  # clean


def case_pool_7x7_head_4x4():
    fmap = torch.randn(2, 512, 7, 7)
    pooled = F.max_pool2d(fmap, 2)
    head = nn.Linear(512 * 4 * 4, 1000)
    return head(pooled.flatten(1))  # expect: TL501


def case_pool_7x7_ceil_mode():
    fmap = torch.randn(2, 512, 7, 7)
    pooled = F.max_pool2d(fmap, 2, ceil_mode=True)
    head = nn.Linear(512 * 4 * 4, 1000)
    return head(pooled.flatten(1))  # clean


def case_adaptive_pool_head():
    fmap = torch.randn(2, 512, 13, 9)
    pooled = nn.AdaptiveAvgPool2d((4, 4))(fmap)
    return nn.Linear(512 * 16, 1000)(pooled.flatten(1))  # clean


def case_depthwise_separable_channels():
    depthwise = nn.Conv2d(64, 64, 3, padding=1, groups=64)
    pointwise = nn.Conv2d(64, 128, 1)
    after = nn.Conv2d(64, 128, 3, padding=1)
    x = torch.randn(2, 64, 32, 32)
    return after(pointwise(depthwise(x)))  # expect: TL501


def case_depthwise_separable():
    depthwise = nn.Conv2d(64, 64, 3, padding=1, groups=64)
    pointwise = nn.Conv2d(64, 128, 1)
    after = nn.Conv2d(128, 128, 3, padding=1, stride=2)
    x = torch.randn(2, 64, 32, 32)
    return after(pointwise(depthwise(x)))  # clean


def case_batchnorm_for_wrong_stage():
    stem = nn.Conv2d(3, 64, 7, stride=2, padding=3)
    stage = nn.Conv2d(64, 128, 3, stride=2, padding=1)
    norm = nn.BatchNorm2d(64)
    x = torch.randn(2, 3, 64, 64)
    return norm(stage(stem(x)))  # expect: TL501


def case_lazy_head():
    body = nn.Sequential(nn.Conv2d(3, 16, 3), nn.ReLU(), nn.MaxPool2d(3))
    head = nn.LazyLinear(10)
    return head(body(torch.randn(2, 3, 50, 50)).flatten(1))  # clean

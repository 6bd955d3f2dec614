"""TL501 probe: a CIFAR-style CNN whose classifier assumes the wrong flattened size after two
poolings, a stem fed grayscale images when it takes RGB, and a fusion head that concatenates
features with different batch sizes; against the same network with the right size and a
broadcast that works. Each `case_*` function runs with torch (tests/shapes/test_definite_errors_runtime.py)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SmallCNN(nn.Module):
    def __init__(self, num_classes=10, flat=64 * 4 * 4):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, 3, padding=1)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
        self.fc = nn.Linear(flat, num_classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(torch.flatten(x, 1))  # expect: TL501


class SmallCNNFixed(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, 3, padding=1)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
        self.fc = nn.Linear(64 * 8 * 8, num_classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(torch.flatten(x, 1))  # clean


def case_flatten_size():
    SmallCNN()(torch.randn(8, 3, 32, 32))


def case_flatten_size_fixed():
    SmallCNNFixed()(torch.randn(8, 3, 32, 32))


def case_grayscale_into_rgb_stem():
    stem = nn.Conv2d(3, 64, kernel_size=7, stride=2, padding=3, bias=False)
    mnist = torch.randn(16, 1, 28, 28)
    return stem(mnist)  # expect: TL501


def case_fusion_batch():
    image_feat = torch.randn(32, 512)
    text_feat = torch.randn(16, 256)
    return torch.cat([image_feat, text_feat], dim=1)  # expect: TL501


def case_broadcast_bias():
    logits = torch.randn(32, 10)
    class_bias = torch.zeros(10)
    return logits + class_bias  # clean

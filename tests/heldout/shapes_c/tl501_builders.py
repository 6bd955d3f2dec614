"""TL501 probe: networks assembled by builder code: a VGG `make_layers` over a config list with
"M" for pooling, ResNet `_make_layer` with `expansion` and a downsample built only when the
stride or width changes, an `OrderedDict` `nn.Sequential`, and per-task heads in an
`nn.ModuleDict`; the real bug is the classic one of a Bottleneck ResNet whose classifier is
sized for `512` instead of `512 * Bottleneck.expansion` features (and a stem for grayscale fed
RGB through an `OrderedDict` stack).
Each `case_*` function runs with torch (tests/shapes/test_definite_errors_runtime.py)."""
from collections import OrderedDict

import torch
import torch.nn as nn

CFG_A = [64, "M", 128, "M", 256, 256, "M"]


def make_layers(cfg, in_channels=3, batch_norm=True):
    layers = []
    for v in cfg:
        if v == "M":
            layers += [nn.MaxPool2d(kernel_size=2, stride=2)]
        else:
            conv = nn.Conv2d(in_channels, v, kernel_size=3, padding=1)
            layers += [conv, nn.BatchNorm2d(v), nn.ReLU(inplace=True)] if batch_norm else [conv, nn.ReLU(inplace=True)]
            in_channels = v
    return nn.Sequential(*layers)


def case_vgg_cfg_list():
    features = make_layers(CFG_A)
    head = nn.Linear(256 * 4 * 4, 10)
    return head(features(torch.randn(2, 3, 32, 32)).flatten(1))  # clean


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, in_planes, planes, stride=1):
        super().__init__()
        width = planes
        self.conv1 = nn.Conv2d(in_planes, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, planes * self.expansion, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = None
        if stride != 1 or in_planes != planes * self.expansion:
            self.downsample = nn.Sequential(
                nn.Conv2d(in_planes, planes * self.expansion, 1, stride=stride, bias=False),
                nn.BatchNorm2d(planes * self.expansion),
            )

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu(out + identity)  # clean


class ResNet(nn.Module):
    def __init__(self, block, layers, num_classes=10, head_features=None):
        super().__init__()
        self.in_planes = 64
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True))
        self.layer1 = self._make_layer(block, 64, layers[0])
        self.layer2 = self._make_layer(block, 128, layers[1], stride=2)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(head_features or 128 * block.expansion, num_classes)

    def _make_layer(self, block, planes, blocks, stride=1):
        layers = [block(self.in_planes, planes, stride)]
        self.in_planes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.in_planes, planes))
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.layer2(self.layer1(self.stem(x)))
        return self.fc(torch.flatten(self.pool(x), 1))  # clean


def case_resnet_bottleneck():
    return ResNet(Bottleneck, [2, 2])(torch.randn(2, 3, 32, 32))


def case_resnet_head_without_expansion():
    backbone = ResNet(Bottleneck, [1, 1])
    feats = torch.flatten(backbone.pool(backbone.layer2(backbone.layer1(backbone.stem(torch.randn(2, 3, 32, 32))))), 1)
    fc = nn.Linear(128, 10)
    return fc(feats)  # expect: TL501


def case_ordered_dict_stack():
    net = nn.Sequential(OrderedDict([
        ("conv", nn.Conv2d(1, 16, 5)), ("act", nn.ReLU()), ("pool", nn.MaxPool2d(2)),
        ("flat", nn.Flatten()), ("fc", nn.Linear(16 * 12 * 12, 10)),
    ]))
    return net(torch.randn(4, 1, 28, 28))  # clean


def case_ordered_dict_stack_fed_rgb():
    net = nn.Sequential(OrderedDict([
        ("conv", nn.Conv2d(1, 16, 5)), ("act", nn.ReLU()), ("pool", nn.MaxPool2d(2)),
    ]))
    return net(torch.randn(4, 3, 28, 28))  # expect: TL501


class MultiTaskHeads(nn.Module):
    def __init__(self, dim=256, tasks=None):
        super().__init__()
        tasks = tasks or {"sentiment": 3, "topic": 20, "toxicity": 1}
        self.heads = nn.ModuleDict({name: nn.Linear(dim, n) for name, n in tasks.items()})

    def forward(self, pooled):
        return {name: head(pooled) for name, head in self.heads.items()}  # clean


def case_multitask_heads():
    return MultiTaskHeads()(torch.randn(8, 256))

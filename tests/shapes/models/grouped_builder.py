"""A grouped-convolution network whose builder changes the model's state between calls:
`_stage(2, 2)` is called twice and builds wider blocks the second time."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class GroupedBlock(nn.Module):
    expansion = 2

    def __init__(self, in_planes, groups, group_width, stride=1):
        super().__init__()
        width = groups * group_width
        self.reduce = nn.Conv2d(in_planes, width, kernel_size=1, bias=False)
        self.grouped = nn.Conv2d(width, width, kernel_size=3, stride=stride, padding=1, groups=groups, bias=False)
        self.expand = nn.Conv2d(width, self.expansion * width, kernel_size=1, bias=False)
        self.norm = nn.BatchNorm2d(self.expansion * width)
        self.skip = nn.Sequential()
        if stride != 1 or in_planes != self.expansion * width:
            self.skip = nn.Conv2d(in_planes, self.expansion * width, kernel_size=1, stride=stride, bias=False)

    def forward(self, x):
        out = F.relu(self.reduce(x))
        out = F.relu(self.grouped(out))
        out = self.norm(self.expand(out))
        out = out + self.skip(x)
        return F.relu(out)


class GroupedNet(nn.Module):
    def __init__(self, groups=4, group_width=8, num_classes=10):
        super().__init__()
        self.groups = groups
        self.group_width = group_width
        self.in_planes = 16
        self.stem = nn.Conv2d(3, 16, kernel_size=3, padding=1, bias=False)
        self.stage1 = self._stage(2, 1)
        self.stage2 = self._stage(2, 2)
        self.stage3 = self._stage(2, 2)
        self.head = nn.Linear(self.in_planes, num_classes)

    def _stage(self, blocks, stride):
        layers = []
        for step in [stride] + [1] * (blocks - 1):
            layers.append(GroupedBlock(self.in_planes, self.groups, self.group_width, step))
            self.in_planes = GroupedBlock.expansion * self.groups * self.group_width
        self.group_width *= 2
        return nn.Sequential(*layers)

    def forward(self, x):
        out = F.relu(self.stem(x))
        out = self.stage1(out)
        out = self.stage2(out)
        out = self.stage3(out)
        pooled = F.adaptive_avg_pool2d(out, 1).flatten(1)
        return self.head(pooled)


if __name__ == "__main__":
    net = GroupedNet()
    images = torch.randn(2, 3, 16, 16)
    logits = net(images)
    probs = logits.softmax(dim=-1)
    stem = net.stem(images)
    first = net.stage1(F.relu(stem))

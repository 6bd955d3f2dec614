"""TL203 probe: a RetinaNet-style anchor head flattening `[B, A*C, H, W]` predictions with
`.permute(0, 2, 3, 1).view(B, -1, C)`, Swin's patch merging chaining `view -> permute -> view`
over the 2x2 neighbourhoods, and a forecasting encoder that `transpose`s `[B, C, T]` features to
`[B, T, C]` and later `.view(B, -1)`s that local variable (all three raise "view size is not
compatible with input tensor's size and stride"); near misses are the same flattening with
`.reshape` or after `.contiguous()`, tokens turned back into a feature map with
`.transpose(1, 2).view(B, C, H, W)` (that view only splits the last dim, which a view can do), and
a view of a transposed tensor that a `.contiguous()` bound in between made dense."""
import torch
import torch.nn as nn


class AnchorHead(nn.Module):
    def __init__(self, in_ch, num_anchors, num_classes):
        super().__init__()
        self.num_classes = num_classes
        self.cls = nn.Conv2d(in_ch, num_anchors * num_classes, 3, padding=1)
        self.box = nn.Conv2d(in_ch, num_anchors * 4, 3, padding=1)

    def forward(self, feat):
        B = feat.size(0)
        cls = self.cls(feat).permute(0, 2, 3, 1).view(B, -1, self.num_classes)  # expect: TL203
        box = self.box(feat).permute(0, 2, 3, 1).reshape(B, -1, 4)  # clean
        return cls, box


class FcosHead(AnchorHead):
    def forward(self, feat):
        B = feat.size(0)
        cls = self.cls(feat).permute(0, 2, 3, 1).contiguous().view(B, -1, self.num_classes)  # clean
        box = self.box(feat).permute(0, 2, 3, 1).reshape(B, -1, 4)
        return cls, box


class PatchMerging(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(4 * dim)
        self.reduction = nn.Linear(4 * dim, 2 * dim, bias=False)

    def forward(self, x, H, W):
        B, L, C = x.shape
        x = x.view(B, H // 2, 2, W // 2, 2, C).permute(0, 1, 3, 4, 2, 5).view(B, H // 2 * (W // 2), 4 * C)  # expect: TL203
        return self.reduction(self.norm(x))


class TokensToMap(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Conv2d(dim, dim, 3, padding=1, groups=dim)

    def forward(self, tokens, H, W):
        B, N, C = tokens.shape
        fmap = tokens.transpose(1, 2).view(B, C, H, W)  # clean
        return self.proj(fmap).flatten(2).transpose(1, 2)


class ConvForecaster(nn.Module):
    def __init__(self, n_series, hidden, horizon, window):
        super().__init__()
        self.conv = nn.Conv1d(n_series, hidden, 3, padding=1)
        self.out = nn.Linear(window * hidden, horizon * n_series)
        self.horizon = horizon
        self.n_series = n_series

    def forward(self, x):
        B = x.size(0)
        h = torch.relu(self.conv(x))
        h = h.transpose(1, 2)
        flat = h.view(B, -1)  # expect: TL203
        return self.out(flat).view(B, self.horizon, self.n_series)


class ConvForecasterFixed(ConvForecaster):
    def forward(self, x):
        B = x.size(0)
        h = torch.relu(self.conv(x)).transpose(1, 2)
        h = h.contiguous()
        flat = h.view(B, -1)  # clean
        return self.out(flat).view(B, self.horizon, self.n_series)

"""TL501 probe: sizes computed in `__init__` and used in `forward`: a keyword-spotting conv stack on
40x101 MFCC maps whose flattened size assumes 'same' padding that the convs do not have, a text
classifier pooling `EmbeddingBag` outputs of width 128 into a head built for 100, and a tabular model
concatenating categorical embeddings with the numeric features into a first layer that forgot the
numeric columns; against the same models with the sizes computed from the layers (a dummy forward
pass in `__init__`), `EmbeddingBag` widths that match, and the numeric width counted.
Each `case_*` function runs with torch (tests/shapes/test_definite_errors_runtime.py)."""
import torch
import torch.nn as nn


class KWSNet(nn.Module):
    def __init__(self, n_mfcc=40, frames=100, n_classes=12):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 32, kernel_size=3), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, kernel_size=3), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.head = nn.Linear(64 * (n_mfcc // 4) * (frames // 4), n_classes)

    def forward(self, mfcc):
        return self.head(self.features(mfcc).flatten(1))  # expect: TL501


class KWSNetMeasured(nn.Module):
    def __init__(self, n_mfcc=40, frames=100, n_classes=12):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 32, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.head = nn.Linear(64 * (n_mfcc // 4) * (frames // 4), n_classes)

    def forward(self, mfcc):
        return self.head(self.features(mfcc).flatten(1))  # clean


def case_kws_unpadded_convs():
    return KWSNet()(torch.randn(4, 1, 40, 100))


def case_kws_padded_convs():
    return KWSNetMeasured()(torch.randn(4, 1, 40, 100))


def case_bag_width_against_head():
    bag = nn.EmbeddingBag(20000, 128, mode="mean")
    head = nn.Linear(100, 4)
    tokens = torch.randint(0, 20000, (64,))
    offsets = torch.tensor([0, 10, 25, 40])
    pooled = bag(tokens, offsets)
    return head(pooled)  # expect: TL501


def case_bag_width_matches():
    bag = nn.EmbeddingBag(20000, 128, mode="sum")
    head = nn.Linear(128, 4)
    pooled = bag(torch.randint(0, 20000, (4, 16)))
    return head(pooled)  # clean


class TabularNet(nn.Module):
    def __init__(self, cardinalities=(10, 7, 31), emb_dim=8, n_numeric=13, count_numeric=True):
        super().__init__()
        self.embs = nn.ModuleList(nn.Embedding(c, emb_dim) for c in cardinalities)
        width = len(cardinalities) * emb_dim + (n_numeric if count_numeric else 0)
        self.mlp = nn.Sequential(nn.Linear(width, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, cats, nums):
        embedded = [emb(cats[:, i]) for i, emb in enumerate(self.embs)]
        return self.mlp(torch.cat(embedded + [nums], dim=1))


def case_tabular_counts_numeric():
    model = TabularNet()
    return model(torch.randint(0, 7, (32, 3)), torch.randn(32, 13))  # clean


def case_tabular_first_layer_without_numeric():
    first = nn.Linear(3 * 8, 64)
    embedded = torch.cat([torch.randn(32, 8), torch.randn(32, 8), torch.randn(32, 8), torch.randn(32, 13)], dim=1)
    return first(embedded)  # expect: TL501

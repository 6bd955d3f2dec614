"""TL205 probe: a graph-net data pipeline and a tabular metrics helper: `torch.tensor(edge_index)`
where `edge_index` was built with `torch.stack`, `torch.tensor(self.features[idx])` where the
features are a tensor attribute set from `torch.from_numpy`, and `torch.tensor(preds)` of an
`argmax` result; near misses are `torch.tensor` of Python lists (edge pairs, labels built by
`append`), of a NumPy array (`df[cols].values`), of a `.tolist()` result, of a `.item()` float,
and `torch.as_tensor` of a tensor (no copy, no warning)."""
import numpy as np
import pandas as pd
import torch
from torch.utils.data import Dataset


def build_graph(src_nodes, dst_nodes, num_nodes):
    edge_index = torch.stack([src_nodes, dst_nodes])
    edge_index = torch.tensor(edge_index, dtype=torch.long)  # expect: TL205
    return edge_index, num_nodes


def edges_from_pairs(pairs):
    src = [a for a, _ in pairs]
    dst = [b for _, b in pairs]
    return torch.tensor([src, dst], dtype=torch.long)  # clean


class TabularDataset(Dataset):
    def __init__(self, df: pd.DataFrame, feature_cols, label_col):
        self.features = torch.from_numpy(df[feature_cols].values.astype(np.float32))
        self.raw = df[feature_cols].values
        self.labels = []
        for v in df[label_col]:
            self.labels.append(int(v))

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, idx):
        x = torch.tensor(self.features[idx])  # expect: TL205
        x_raw = torch.tensor(self.raw[idx], dtype=torch.float32)  # clean
        y = torch.tensor(self.labels[idx])  # clean
        return x, x_raw, y


def accuracy(logits, targets):
    preds = logits.argmax(dim=1)
    preds = torch.tensor(preds)  # expect: TL205
    return (preds == targets).float().mean()


def as_list_then_tensor(scores):
    ranked = scores.argsort(descending=True).tolist()
    return torch.tensor(ranked)  # clean


def scalar_threshold(probs):
    thr = probs.median().item()
    return torch.tensor(thr)  # clean


def no_copy(features):
    x = torch.as_tensor(features, dtype=torch.float32)  # clean
    return x

"""TL205 probe: `torch.tensor` re-wrapping tensors that came from `torch.from_numpy`, `torch.stack` and a
model call (through `from torch import tensor` too); near misses wrap lists, numpy arrays and `.tolist()`."""
import numpy as np
import torch
from torch import tensor


@torch.inference_mode()
def cache_features(backbone, loader):
    backbone.eval()
    feats, labels = [], []
    for images, y in loader:
        feats.append(backbone(images))
        labels.extend(y.tolist())
    bank = torch.tensor(torch.stack(feats), dtype=torch.float16)  # expect: TL205
    label_ids = torch.tensor(labels, dtype=torch.long)  # clean
    return bank, label_ids


def load_targets(path):
    arr = np.load(path)
    targets = torch.from_numpy(arr)
    return tensor(targets, dtype=torch.float32)  # expect: TL205


def class_weights(counts: np.ndarray):
    return torch.tensor(1.0 / np.maximum(counts, 1), dtype=torch.float32)  # clean


@torch.no_grad()
def embed_query(encoder, tokens):
    encoder.eval()
    emb = encoder(tokens)
    return torch.tensor(emb)  # expect: TL205


def prototype_ids(bank: torch.Tensor):
    return torch.tensor(bank.argmax(dim=1).tolist())  # clean

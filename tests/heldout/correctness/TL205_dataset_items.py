"""TL205 probe: dataset code where `torch.tensor` gets a value of unknown type (left alone) and values that
are tensors for sure (`torch.randn`, a method of an annotated tensor argument)."""
import torch
from torch.utils.data import Dataset


class WindowDataset(Dataset):
    def __init__(self, series, window=64):
        self.series = series
        self.window = window

    def __len__(self):
        return len(self.series) - self.window

    def __getitem__(self, idx):
        chunk = self.series[idx: idx + self.window]
        return torch.tensor(chunk, dtype=torch.float32)  # clean


def augment(x: torch.Tensor, sigma=0.05):
    noise = torch.randn(x.shape) * sigma
    return x + torch.tensor(noise)  # expect: TL205


def standardise(x: torch.Tensor):
    mean = torch.tensor(x.mean(dim=0))  # expect: TL205
    return (x - mean) / x.std(dim=0).clamp_min(1e-6)


def to_tensor(values):
    return torch.tensor(values, dtype=torch.float32)  # clean

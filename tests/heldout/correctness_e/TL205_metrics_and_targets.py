"""TL205 probe: metric and target code that re-wraps tensors: `torch.tensor` of an
`F.one_hot` result, of `logits.argmax(-1)` (a `Tensor`-annotated argument) bound to a name and of a comparison of it, and of a `Tensor`-annotated
parameter's `.mean(0)`; near misses wrap a list of Python floats, a `.item()` value, an
unannotated argument of unknown type, `torch.as_tensor` of a tensor (no copy, no warning) and
a list of 0-d tensors built in a comprehension."""
import torch
import torch.nn.functional as F
from torch import Tensor


def soft_targets(labels: Tensor, n_classes: int, smoothing=0.1):
    hard = torch.tensor(F.one_hot(labels, n_classes), dtype=torch.float32)  # expect: TL205
    return hard * (1 - smoothing) + smoothing / n_classes


def accuracy(logits: Tensor, labels):
    preds = logits.argmax(-1)
    correct = torch.tensor(preds == labels)  # expect: TL205
    pred_copy = torch.tensor(preds)  # expect: TL205
    return correct.float().mean(), pred_copy


def running_mean(feats: Tensor):
    return torch.tensor(feats.mean(0))  # expect: TL205


def summarise(losses, model_out):
    values = torch.tensor([float(v) for v in losses])  # clean
    best = torch.tensor(model_out.max().item())  # clean
    raw = torch.tensor(model_out)  # clean
    same = torch.as_tensor(values)  # clean
    stacked = torch.tensor([v for v in values])  # clean
    return values, best, raw, same, stacked

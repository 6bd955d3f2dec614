"""TL706 and TL707 probe: a time-series `IterableDataset` pipeline and its losses. The batches are
built with the private `torch.utils.data._utils.collate.default_collate` (imported by name: the
import and its use) and converted with `torch.utils.data._utils.collate.default_convert` written
out in full; the demand targets are log-transformed with `torch.log(1 + y)` and forecasts mapped
back with `torch.exp(pred) - 1`, a sampled-softmax recommender loss takes
`torch.log(torch.sum(torch.exp(logits), dim=-1))`, and features are standardised with
`(x - mean) / torch.sqrt(var + eps)`; near misses are the public `default_collate` /
`default_convert`, `torch.log1p` / `torch.expm1`, a log-sum-exp stabilised by the row maximum,
`torch.log(y + 1e-6)` (not `1 + y`), and `torch.sqrt(var + eps) / n` (the root on top)."""
import torch
import torch.utils.data
from torch.utils.data import IterableDataset, get_worker_info
from torch.utils.data import default_collate, default_convert
from torch.utils.data._utils.collate import default_collate as private_collate  # expect: TL706


class WindowStream(IterableDataset):
    def __init__(self, series, window, horizon, batch_size):
        super().__init__()
        self.series, self.window, self.horizon, self.batch_size = series, window, horizon, batch_size

    def _windows(self):
        info = get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        for i in range(start, len(self.series) - self.window - self.horizon, step):
            yield {"x": self.series[i:i + self.window], "y": self.series[i + self.window:i + self.window + self.horizon]}

    def __iter__(self):
        buf = []
        for item in self._windows():
            buf.append(item)
            if len(buf) == self.batch_size:
                yield private_collate(buf)  # expect: TL706
                buf = []


class WindowStreamPublic(WindowStream):
    def __iter__(self):
        buf = []
        for item in self._windows():
            buf.append(default_convert(item))  # clean
            if len(buf) == self.batch_size:
                yield default_collate(buf)  # clean
                buf = []


def to_tensors(sample):
    return torch.utils.data._utils.collate.default_convert(sample)  # expect: TL706


def log_target(y):
    return torch.log(1 + y)  # expect: TL707


def log_target_stable(y):
    return torch.log1p(y)  # clean


def eps_log(y):
    return torch.log(y + 1e-6)  # clean


def from_log(pred):
    return torch.exp(pred) - 1  # expect: TL707


def from_log_stable(pred):
    return torch.expm1(pred)  # clean


def sampled_softmax_loss(pos_logit, logits):
    log_z = torch.log(torch.sum(torch.exp(logits), dim=-1))  # expect: TL707
    return (log_z - pos_logit).mean()


def sampled_softmax_loss_stable(pos_logit, logits):
    m = logits.max(dim=-1, keepdim=True).values
    log_z = torch.log(torch.sum(torch.exp(logits - m), dim=-1)) + m.squeeze(-1)  # clean
    return (log_z - pos_logit).mean()


def standardise(x, mean, var, eps=1e-5):
    return (x - mean) / torch.sqrt(var + eps)  # expect: TL707


def mean_stderr(var, n, eps=1e-5):
    return torch.sqrt(var + eps) / n  # clean

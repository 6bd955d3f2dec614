"""TL601 probe: a forecasting encoder passed to `torch.compile` whose `forward` packs padded series
with `lengths.tolist()` and calls a helper method on `self` that prints batch statistics, and a
compiled detection post-processor that keeps boxes with a boolean mask and `nonzero()` (both
data-dependent output shapes); near misses are `.numpy()` (traced by Dynamo on torch 2.13),
`x.size(1)`, `torch.where` and `masked_fill` (shape-preserving), and the same `.tolist()` in an
eager helper that nothing compiles."""
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


class PackedEncoder(nn.Module):
    def __init__(self, n_features, hidden):
        super().__init__()
        self.rnn = nn.GRU(n_features, hidden, batch_first=True)
        self.proj = nn.Linear(hidden, 1)

    def _log_stats(self, x):
        print("batch mean", x.mean())  # expect: TL601

    def forward(self, x, lengths):
        self._log_stats(x)
        T = x.size(1)  # clean
        packed = pack_padded_sequence(x, lengths.tolist(), batch_first=True, enforce_sorted=False)  # expect: TL601
        out, _ = self.rnn(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=T)
        mask = torch.arange(T, device=x.device)[None, :] >= lengths[:, None]
        return self.proj(out).squeeze(-1).masked_fill(mask, 0.0)  # clean


encoder = torch.compile(PackedEncoder(8, 64))


@torch.compile
def keep_confident(boxes, scores, threshold: float):
    keep = scores > threshold
    kept = boxes[keep]  # expect: TL601
    idx = keep.nonzero()  # expect: TL601
    ref = scores.numpy()  # clean
    weights = torch.where(keep, scores, torch.zeros_like(scores))  # clean
    return kept, idx, weights, ref


def eager_lengths(lengths):
    return lengths.tolist()  # clean

"""TL601 probe: a speech model that compiles its encoder as an attribute
(`self.encoder = torch.compile(ConformerEncoder(...))`) and a `reduce-overhead` compiled
scoring function: in the compiled encoder's `forward`, an `if` on `lengths.max() > self.max_len`
and a `print` of a tensor statistic; near misses are the decorated function's `.numpy()` of its
scores (Dynamo traces `.numpy()` through `torch._numpy` on torch 2.13: no break), the uncompiled decoder's identical branch, `torch._check` and an `assert` on sizes,
a branch on a Python flag and on `x is None`, `logging` in the eager training step, and a loop
over `range(x.size(1))`."""
import logging

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger(__name__)


class ConformerEncoder(nn.Module):
    def __init__(self, dim=256, layers=6, max_len=3000, use_rel_pos=True):
        super().__init__()
        self.blocks = nn.ModuleList(nn.TransformerEncoderLayer(dim, 4, batch_first=True) for _ in range(layers))
        self.max_len = max_len
        self.use_rel_pos = use_rel_pos

    def forward(self, x, lengths, mask=None):
        torch._check(x.size(1) <= self.max_len)  # clean
        assert x.dim() == 3, x.shape  # clean
        if lengths.max() > self.max_len:  # expect: TL601
            x = x[:, : self.max_len]
        if mask is None:  # clean
            mask = torch.arange(x.size(1), device=x.device)[None] >= lengths[:, None]
        if self.use_rel_pos:  # clean
            x = x + 0.0
        print("mean frame energy", x.pow(2).mean())  # expect: TL601
        for block in self.blocks:
            x = block(x, src_key_padding_mask=mask)
        return x


class Decoder(nn.Module):
    def __init__(self, dim=256, vocab=5000, max_len=3000):
        super().__init__()
        self.proj = nn.Linear(dim, vocab)
        self.max_len = max_len

    def forward(self, h, lengths):
        if lengths.max() > self.max_len:  # clean
            h = h[:, : self.max_len]
        return self.proj(h)


class SpeechModel(nn.Module):
    def __init__(self, dim=256, vocab=5000):
        super().__init__()
        self.encoder = torch.compile(ConformerEncoder(dim))
        self.decoder = Decoder(dim, vocab)

    def forward(self, feats, lengths):
        return self.decoder(self.encoder(feats, lengths), lengths)


@torch.compile(mode="reduce-overhead")
def frame_scores(logits, blank=0):
    probs = logits.softmax(-1)
    scores = 1.0 - probs[..., blank]
    for t in range(scores.size(1)):  # clean
        scores[:, t] = scores[:, t].clamp(min=0.0)
    return scores.cpu().numpy()  # clean


def train_step(model, batch, optimizer):
    out = model(batch["feats"], batch["lengths"])
    loss = F.cross_entropy(out.transpose(1, 2), batch["targets"])
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    log.info("loss %.4f", loss.detach())  # clean
    return loss

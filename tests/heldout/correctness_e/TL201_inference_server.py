"""TL201 probe: a batched text-classification inference server that takes probabilities with
`nnf.softmax(logits)` (the module imported as `nnf`), an `nn.Softmin()` head for a distance
classifier, and `torch.nn.functional.log_softmax(...)` without dim; near misses are
`scipy.special.softmax` on a NumPy array, `nn.Softmax2d()` (no dim argument: it always
normalises over channels), `F.gumbel_softmax` (dim defaults to -1), a dim passed through a
keyword from the config and `Tensor.softmax(-1)`."""
import queue
import threading

import numpy as np
import scipy.special
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn import functional as nnf


class DistanceHead(nn.Module):
    def __init__(self, dim, n_classes):
        super().__init__()
        self.prototypes = nn.Parameter(torch.randn(n_classes, dim))
        self.to_probs = nn.Softmin()  # expect: TL201

    def forward(self, x):
        return self.to_probs(torch.cdist(x, self.prototypes))


class SegHead(nn.Module):
    def __init__(self, channels, n_classes):
        super().__init__()
        self.proj = nn.Conv2d(channels, n_classes, 1)
        self.norm = nn.Softmax2d()  # clean

    def forward(self, feats):
        return self.norm(self.proj(feats))


class Server:
    def __init__(self, model, tokenizer, cfg, max_batch=32):
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.cfg = cfg
        self.max_batch = max_batch
        self.requests = queue.Queue()
        threading.Thread(target=self._loop, daemon=True).start()

    @torch.inference_mode()
    def _predict(self, texts):
        enc = self.tokenizer(texts, padding=True, truncation=True, return_tensors="pt")
        logits = self.model(**enc).logits
        probs = nnf.softmax(logits)  # expect: TL201
        logprobs = torch.nn.functional.log_softmax(logits / self.cfg.temperature)  # expect: TL201
        calibrated = F.softmax(logits / self.cfg.temperature, dim=self.cfg.class_dim)  # clean
        return probs, logprobs, calibrated

    def _loop(self):
        while True:
            batch = [self.requests.get()]
            while len(batch) < self.max_batch and not self.requests.empty():
                batch.append(self.requests.get())
            probs, _, _ = self._predict([r["text"] for r in batch])
            for r, p in zip(batch, probs.tolist()):
                r["reply"](p)


def rerank(scores: np.ndarray):
    return scipy.special.softmax(scores)  # clean


def sample_labels(logits, tau=0.5):
    hard = F.gumbel_softmax(logits, tau=tau, hard=True)  # clean
    soft = logits.softmax(-1)  # clean
    return hard, soft

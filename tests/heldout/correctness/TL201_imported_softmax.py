"""TL201 probe: softmax reached through `from torch.nn.functional import softmax, log_softmax`, a fully
qualified `torch.nn.functional.log_softmax`, and `nn.Softmax()` inside a Sequential; near misses give the
dim positionally or call a project function that happens to be named softmax."""
import numpy as np
import torch
from torch import nn
from torch.nn.functional import log_softmax, softmax


def numpy_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


class SlotAttention(nn.Module):
    def __init__(self, dim=64, n_slots=7, iters=3):
        super().__init__()
        self.iters = iters
        self.slots = nn.Parameter(torch.randn(1, n_slots, dim))
        self.to_q, self.to_k, self.to_v = nn.Linear(dim, dim), nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.gru = nn.GRUCell(dim, dim)
        self.classify = nn.Sequential(nn.Linear(dim, 10), nn.Softmax())  # expect: TL201

    def forward(self, inputs):
        B, N, D = inputs.shape
        slots = self.slots.expand(B, -1, -1)
        k, v = self.to_k(inputs), self.to_v(inputs)
        for _ in range(self.iters):
            logits = self.to_q(slots) @ k.transpose(1, 2) * D ** -0.5
            attn = softmax(logits, 1)  # clean
            attn = attn / attn.sum(dim=-1, keepdim=True)
            updates = attn @ v
            slots = self.gru(updates.reshape(-1, D), slots.reshape(-1, D)).reshape(B, -1, D)
        return slots, self.classify(slots.mean(dim=1))


def slot_log_probs(slot_logits):
    return log_softmax(slot_logits)  # expect: TL201


def token_log_probs(lm_logits):
    return torch.nn.functional.log_softmax(lm_logits)  # expect: TL201


def class_probabilities(scores: np.ndarray):
    return numpy_softmax(scores)  # clean

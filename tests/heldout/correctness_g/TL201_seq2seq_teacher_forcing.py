"""TL201 probe: a GRU seq2seq translator trained with teacher forcing: the decoder's output layer
built as `nn.LogSoftmax()` with no dim, greedy decoding that takes `F.softmax(step_logits)` of the
step logits, and a beam-search scorer that calls `log_softmax(step_logits)` imported by name from
`torch.nn.functional`; near misses
are the same calls with a positional dim (`torch.log_softmax(x, 1)`, `.softmax(-1)`), an
`nn.Softmax(dim=-1)` module, scipy's `softmax` of a NumPy array (it has its own `axis=None`
default and is no torch call), and a method named `softmax` on the project's own sampler class."""
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from scipy.special import softmax as np_softmax
from torch.nn.functional import log_softmax


class Decoder(nn.Module):
    def __init__(self, vocab, hidden=512):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.gru = nn.GRU(hidden, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab)
        self.log_probs = nn.LogSoftmax()  # expect: TL201
        self.attn_norm = nn.Softmax(dim=-1)  # clean

    def forward(self, token, hidden):
        out, hidden = self.gru(self.embed(token).unsqueeze(1), hidden)
        return self.log_probs(self.out(out.squeeze(1))), hidden


class TemperatureSampler:
    def __init__(self, temperature=0.7):
        self.temperature = temperature

    def softmax(self, logits):
        return torch.softmax(logits / self.temperature, -1)  # clean

    def sample(self, logits):
        return torch.multinomial(self.softmax(logits), 1)  # clean


def train_step(encoder, decoder, src, tgt, optimizer, teacher_forcing=0.5):
    optimizer.zero_grad(set_to_none=True)
    _, hidden = encoder(src)
    token = tgt[:, 0]
    loss = 0.0
    for t in range(1, tgt.size(1)):
        log_probs, hidden = decoder(token, hidden)
        loss = loss + F.nll_loss(log_probs, tgt[:, t])
        token = tgt[:, t] if random.random() < teacher_forcing else log_probs.argmax(1)
    loss.backward()
    optimizer.step()
    return loss.detach() / (tgt.size(1) - 1)


@torch.no_grad()
def greedy_decode(encoder, decoder, src, bos, eos, max_len=64):
    encoder.eval()
    decoder.eval()
    _, hidden = encoder(src)
    token = torch.full((src.size(0),), bos, dtype=torch.long, device=src.device)
    out = []
    for _ in range(max_len):
        step_logits, hidden = decoder(token, hidden)
        probs = F.softmax(step_logits)  # expect: TL201
        token = probs.argmax(-1)
        out.append(token)
        if (token == eos).all():
            break
    return torch.stack(out, 1)


def beam_scores(step_logits, beam_scores_so_far):
    return beam_scores_so_far.unsqueeze(-1) + log_softmax(step_logits)  # expect: TL201


def length_penalised(step_logits, lengths, alpha=0.6):
    lp = torch.log_softmax(step_logits, 1)  # clean
    return lp / (((5 + lengths) / 6) ** alpha).unsqueeze(-1)


def ensemble_vote(member_logits: list[np.ndarray]):
    stacked = np.stack(member_logits)
    return np_softmax(stacked.mean(0), axis=-1)  # clean


def attention_weights(query, keys):
    return (query.unsqueeze(1) @ keys.transpose(1, 2)).squeeze(1).softmax(-1)  # clean

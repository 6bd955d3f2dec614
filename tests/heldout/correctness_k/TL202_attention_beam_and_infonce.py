"""TL202 probe: attention written by hand and decoding. A Luong-style attention layer normalises
`torch.bmm(query, keys.transpose(1, 2))` over dim 0 (the sentences of the batch), a causal
self-attention block takes `F.softmax(att, dim=0)` of scores a shape comment gives as
`[B, nh, T, T]`, and a batched beam-search step takes `log_softmax(dim=0)` of `[B, V]` logits
after `B, V = logits.shape`; near misses are InfoNCE's column direction (`log_softmax(sim, dim=0)`
of a `[B, B]` similarity matrix: the text-to-image half of a symmetric loss), the softmax over
dim 0 of one image's `[C, H, W]` logits, of one sentence's beam scores, of learned mixing weights,
and of sequence-first `[T, B]` energies."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class LuongAttention(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.proj = nn.Linear(hidden, hidden, bias=False)

    def forward(self, query, keys, mask):
        # query: [B, 1, H], keys: [B, S, H]
        scores = torch.bmm(self.proj(query), keys.transpose(1, 2))
        scores = scores.masked_fill(~mask.unsqueeze(1), float("-inf"))
        weights = F.softmax(scores, dim=0)  # expect: TL202
        return torch.bmm(weights, keys), weights


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head = n_head
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))  # [B, nh, T, T]
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=0)  # expect: TL202
        y = (att @ v).transpose(1, 2).reshape(B, T, C)
        return self.c_proj(y)


def beam_step(logits, beam_scores, beam_size):
    B, V = logits.shape
    log_probs = logits.log_softmax(dim=0)  # expect: TL202
    cand = beam_scores.unsqueeze(-1) + log_probs
    return cand.view(-1).topk(beam_size)


def beam_step_one_sentence(step_logits, beam_scores, beam_size):
    # step_logits: [beam, V]; beam_scores: [beam]
    log_probs = F.log_softmax(step_logits, dim=-1)
    cand = (beam_scores.unsqueeze(-1) + log_probs).view(-1)
    top, idx = cand.topk(beam_size)
    return top, idx, torch.softmax(top, dim=0)  # clean


def info_nce(z_img, z_txt, tau=0.07):
    z_img, z_txt = F.normalize(z_img, dim=-1), F.normalize(z_txt, dim=-1)
    sim = z_img @ z_txt.T / tau
    i2t = -F.log_softmax(sim, dim=1).diagonal()  # clean
    t2i = -F.log_softmax(sim, dim=0).diagonal()  # clean
    return (i2t.mean() + t2i.mean()) / 2


def overlay_probs(logits):
    # logits: [B, C, H, W]; one image for the overlay
    probs = logits[0].softmax(dim=0)  # clean
    return probs.argmax(0), probs.amax(0)


class ScalarMix(nn.Module):
    def __init__(self, n_layers):
        super().__init__()
        self.mix = nn.Parameter(torch.zeros(n_layers))
        self.gamma = nn.Parameter(torch.ones(()))

    def forward(self, layers):
        w = torch.softmax(self.mix, dim=0)  # clean
        return self.gamma * sum(wi * h for wi, h in zip(w, layers))


def seq_first_attention(energy, enc_out):
    # energy: [T, B], enc_out: [T, B, H]
    alpha = F.softmax(energy, dim=0)  # clean
    return (alpha.unsqueeze(-1) * enc_out).sum(0)

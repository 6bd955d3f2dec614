"""TL501 probe: a GPT-style model configured from a dataclass and a model built from a dict
with `Model(**cfg)`: the blocks live in an `nn.ModuleList` built by a comprehension, a learned
position table half as wide as the token embedding, an index past the last class of a logits
tensor, and `torch.stack` of per-layer states of different widths; against the same model
with matching widths, weight tying, position ids from `torch.arange(T)`, `x[:, -1, :]` for the
last token and `torch.stack` of equal states.
Each `case_*` function runs with torch (tests/shapes/test_definite_errors_runtime.py)."""
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class GPTConfig:
    vocab_size: int = 1000
    block_size: int = 64
    n_layer: int = 2
    n_head: int = 4
    n_embd: int = 128
    pos_embd: int = 128


class Block(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.n_embd)
        self.attn = nn.MultiheadAttention(cfg.n_embd, cfg.n_head, batch_first=True)
        self.ln2 = nn.LayerNorm(cfg.n_embd)
        self.mlp = nn.Sequential(nn.Linear(cfg.n_embd, 4 * cfg.n_embd), nn.GELU(), nn.Linear(4 * cfg.n_embd, cfg.n_embd))

    def forward(self, x, mask):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.cfg = cfg
        self.tok = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        self.pos = nn.Embedding(cfg.block_size, cfg.pos_embd)
        self.blocks = nn.ModuleList([Block(cfg) for _ in range(cfg.n_layer)])
        self.ln_f = nn.LayerNorm(cfg.n_embd)
        self.head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)
        self.head.weight = self.tok.weight

    def forward(self, idx):
        B, T = idx.shape
        pos = torch.arange(T, device=idx.device)
        x = self.tok(idx) + self.pos(pos)  # expect: TL501
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool, device=idx.device), diagonal=1)
        for block in self.blocks:
            x = block(x, mask)
        return self.head(self.ln_f(x))


def case_gpt_position_table_width():
    model = GPT(GPTConfig(pos_embd=64))
    return model(torch.randint(0, 1000, (2, 16)))


def case_gpt_last_token():
    cfg = GPTConfig()
    tok = nn.Embedding(cfg.vocab_size, cfg.n_embd)
    block = Block(cfg)
    idx = torch.randint(0, cfg.vocab_size, (2, 16))
    mask = torch.triu(torch.ones(16, 16, dtype=torch.bool), diagonal=1)
    h = block(tok(idx), mask)  # clean
    logits = h[:, -1, :] @ tok.weight.T  # clean
    return F.softmax(logits, dim=-1)


def case_index_past_last_class():
    logits = torch.randn(32, 10)
    positive = logits[:, 10]  # expect: TL501
    return positive


def case_last_class():
    logits = torch.randn(32, 10)
    return logits[:, 9] - logits[:, -1]  # clean


class Tagger(nn.Module):
    def __init__(self, vocab_size, embed_dim, hidden_dims, n_tags):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed_dim)
        dims = [embed_dim, *hidden_dims]
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.out = nn.Linear(dims[-1], n_tags)

    def forward(self, tokens):
        h = self.embed(tokens)
        states = []
        for layer in self.layers:
            h = torch.tanh(layer(h))
            states.append(h)
        return self.out(h), states


def case_tagger_from_dict():
    cfg = {"vocab_size": 500, "embed_dim": 32, "hidden_dims": [64, 64], "n_tags": 5}
    model = Tagger(**cfg)
    logits, states = model(torch.randint(0, 500, (4, 12)))  # clean
    return logits, torch.stack(states, dim=0)  # clean


def case_stack_states_of_other_widths():
    h1 = torch.tanh(nn.Linear(32, 64)(torch.randn(4, 12, 32)))
    h2 = torch.tanh(nn.Linear(64, 48)(h1))
    return torch.stack([h1, h2], dim=0)  # expect: TL501

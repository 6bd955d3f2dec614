"""TL106 probe: a decoder-only transformer that builds its causal mask and positions inside forward without
a device; near misses pass `device=`, use `*_like` / `new_*`, or build buffers in `__init__`."""
import torch
from torch import nn


class TinyGPT(nn.Module):
    def __init__(self, vocab=50257, dim=384, heads=6, layers=6, max_len=256):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_len, dim)
        layer = nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=0.1, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.register_buffer("scale", torch.ones(1))  # clean

    def forward(self, idx):
        B, T = idx.shape
        positions = torch.arange(T)  # expect: TL106
        mask = torch.triu(torch.full((T, T), float("-inf")), diagonal=1)  # expect: TL106
        h = self.tok(idx) + self.pos(positions)
        return self.head(self.blocks(h, mask=mask, is_causal=True))


class TinyGPTFixed(TinyGPT):
    def forward(self, idx):
        B, T = idx.shape
        positions = torch.arange(T, device=idx.device)  # clean
        mask = torch.triu(idx.new_full((T, T), float("-inf"), dtype=torch.float), diagonal=1)  # clean
        pad = torch.zeros_like(idx)  # clean
        h = self.tok(idx + pad) + self.pos(positions)
        return self.head(self.blocks(h, mask=mask, is_causal=True))


def make_batch(batch_size, seq_len, vocab=50257):
    return torch.randint(0, vocab, (batch_size, seq_len))  # clean

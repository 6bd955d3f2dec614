"""TL104 probe: zeroing the padding row of an embedding and editing a weight by index outside no_grad;
near misses use `nn.init`, a rebound (non-leaf) tensor, and the `.data` view."""
import torch
import torch.nn as nn


class TextEncoder(nn.Module):
    def __init__(self, vocab=30000, dim=300, pad_idx=0):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.embed.weight[pad_idx] = 0.0  # expect: TL104
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        nn.init.orthogonal_(self.rnn.weight_hh_l0)  # clean
        nn.init.zeros_(self.rnn.bias_hh_l0)  # clean

    def forward(self, tokens):
        out, _ = self.rnn(self.embed(tokens))
        return out[:, -1]


class BagEncoder(nn.Module):
    def __init__(self, vocab=30000, dim=300, pad_idx=0):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab, dim, mode="mean")
        self.embed.weight.data[pad_idx] = 0.0  # clean

    def forward(self, tokens, offsets):
        return self.embed(tokens, offsets)


def load_pretrained_vectors(encoder: TextEncoder, vectors: torch.Tensor, rows):
    encoder.embed.weight[rows] = vectors  # expect: TL104


def scaled_bias(dim):
    b = torch.randn(dim, requires_grad=True)
    scaled = b * 0.5
    scaled += 1.0  # clean
    return b, scaled

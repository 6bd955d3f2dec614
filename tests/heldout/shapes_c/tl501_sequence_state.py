"""TL501 probe: recurrent encoder-decoders and their states: an initial state for a
bidirectional LSTM shaped for one direction, Bahdanau attention whose `bmm` multiplies the
decoder state by the encoder outputs without the `unsqueeze`, and a decoder `GRUCell` fed the
concatenation of an embedding and a context without the context's width; against initial states
of `num_layers * 2`, `bmm(weights.unsqueeze(1), enc).squeeze(1)`, a cell sized for the
concatenation, and `pack_padded_sequence` outputs padded back.
Each `case_*` function runs with torch (tests/shapes/test_definite_errors_runtime.py)."""
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


class Encoder(nn.Module):
    def __init__(self, vocab=800, emb=64, hidden=128, layers=2):
        super().__init__()
        self.layers, self.hidden = layers, hidden
        self.embed = nn.Embedding(vocab, emb, padding_idx=0)
        self.rnn = nn.LSTM(emb, hidden, num_layers=layers, batch_first=True, bidirectional=True)

    def forward(self, src, lengths):
        B = src.size(0)
        h0 = torch.zeros(self.layers * 2, B, self.hidden, device=src.device)
        c0 = torch.zeros_like(h0)
        packed = pack_padded_sequence(self.embed(src), lengths, batch_first=True, enforce_sorted=False)
        out, (h, c) = self.rnn(packed, (h0, c0))  # clean
        out, _ = pad_packed_sequence(out, batch_first=True)
        return out, h


def case_encoder():
    enc = Encoder()
    return enc(torch.randint(1, 800, (4, 15)), torch.tensor([15, 12, 9, 3]))


def case_initial_state_for_one_direction():
    rnn = nn.LSTM(64, 128, num_layers=2, batch_first=True, bidirectional=True)
    x = torch.randn(4, 15, 64)
    h0 = torch.zeros(2, 4, 128)
    c0 = torch.zeros(2, 4, 128)
    return rnn(x, (h0, c0))  # expect: TL501


class BahdanauAttention(nn.Module):
    def __init__(self, enc_dim=256, dec_dim=128, attn_dim=96):
        super().__init__()
        self.W_enc = nn.Linear(enc_dim, attn_dim, bias=False)
        self.W_dec = nn.Linear(dec_dim, attn_dim)
        self.v = nn.Linear(attn_dim, 1, bias=False)

    def forward(self, dec_state, enc_out, mask):
        # dec_state: (B, dec_dim); enc_out: (B, S, enc_dim); mask: (B, S)
        scores = self.v(torch.tanh(self.W_enc(enc_out) + self.W_dec(dec_state).unsqueeze(1))).squeeze(-1)  # clean
        weights = scores.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        context = torch.bmm(weights.unsqueeze(1), enc_out).squeeze(1)  # clean
        return context, weights


def case_bahdanau():
    attn = BahdanauAttention()
    mask = torch.ones(4, 15, dtype=torch.bool)
    return attn(torch.randn(4, 128), torch.randn(4, 15, 256), mask)


def case_bmm_without_unsqueeze():
    weights = torch.randn(4, 15).softmax(dim=-1)
    enc_out = torch.randn(4, 15, 256)
    return torch.bmm(weights, enc_out)  # expect: TL501


def case_decoder_cell_input():
    embed = nn.Embedding(800, 64)
    cell = nn.GRUCell(64, 128)
    context = torch.randn(4, 256)
    prev = torch.randint(0, 800, (4,))
    h = torch.zeros(4, 128)
    return cell(torch.cat([embed(prev), context], dim=-1), h)  # expect: TL501


def case_decoder_cell_input_fixed():
    embed = nn.Embedding(800, 64)
    cell = nn.GRUCell(64 + 256, 128)
    context = torch.randn(4, 256)
    h = torch.zeros(4, 128)
    for step in range(3):
        prev = torch.randint(0, 800, (4,))
        h = cell(torch.cat([embed(prev), context], dim=-1), h)  # clean
    return h

"""TL501/TL503 probe: a Bahdanau-style decoder step whose GRU cell input forgets the context width, CTC
frame subsampling whose projection assumes 4x instead of the 2x the stride gives, a graph readout whose
edge index is built from floats, and a dataclass-configured tabular head fed the raw feature count;
against the same decoder with `emb_dim + enc_dim`, the projection sized from the actual stride, an
integer edge index and the embedded width.
Each `case_*` function runs with torch (tests/shapes/test_definite_errors_runtime.py)."""
from dataclasses import dataclass

import torch
import torch.nn as nn


def case_decoder_cell_without_context():
    emb_dim, enc_dim, hid = 64, 128, 256
    cell = nn.GRUCell(emb_dim, hid)
    embedded = torch.randn(8, emb_dim)
    context = torch.randn(8, enc_dim)
    return cell(torch.cat([embedded, context], dim=-1), torch.zeros(8, hid))  # expect: TL501


def case_decoder_cell_with_context():
    emb_dim, enc_dim, hid = 64, 128, 256
    cell = nn.GRUCell(emb_dim + enc_dim, hid)
    step_in = torch.cat([torch.randn(8, emb_dim), torch.randn(8, enc_dim)], dim=-1)
    return cell(step_in, torch.zeros(8, hid))  # clean


class Subsampler(nn.Module):
    def __init__(self, n_mels=80, channels=32, out_dim=144):
        super().__init__()
        self.conv = nn.Conv2d(1, channels, kernel_size=3, stride=2, padding=1)
        self.proj = nn.Linear(channels * (n_mels // 4), out_dim)

    def forward(self, mels):
        h = torch.relu(self.conv(mels.unsqueeze(1)))
        b, c, f, t = h.shape
        return self.proj(h.permute(0, 3, 1, 2).reshape(b, t, c * f))  # expect: TL501


class SubsamplerSized(nn.Module):
    def __init__(self, n_mels=80, channels=32, out_dim=144):
        super().__init__()
        self.conv = nn.Conv2d(1, channels, kernel_size=3, stride=2, padding=1)
        self.proj = nn.Linear(channels * ((n_mels + 1) // 2), out_dim)

    def forward(self, mels):
        h = torch.relu(self.conv(mels.unsqueeze(1)))
        b, c, f, t = h.shape
        return self.proj(h.permute(0, 3, 1, 2).reshape(b, t, c * f))  # clean


def case_subsampler_quarter():
    return Subsampler()(torch.randn(2, 80, 100))


def case_subsampler_half():
    return SubsamplerSized()(torch.randn(2, 80, 100))


def case_float_edge_index():
    x = torch.randn(5, 16)
    edge_index = torch.tensor([[0.0, 1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 4.0]])
    return x[edge_index[0]]  # expect: TL503


def case_int_edge_index():
    x = torch.randn(5, 16)
    edge_index = torch.tensor([[0, 1, 2, 3], [1, 2, 3, 4]])
    return x[edge_index[0]] + x[edge_index[1]]  # clean


@dataclass
class HeadConfig:
    n_features: int = 20
    emb_dim: int = 8
    hidden: int = 64


def case_head_fed_raw_features():
    cfg = HeadConfig()
    embed = nn.Linear(cfg.n_features, cfg.emb_dim * cfg.n_features)
    head = nn.Linear(cfg.n_features, cfg.hidden)
    h = embed(torch.randn(32, cfg.n_features))
    return head(h)  # expect: TL501


def case_head_fed_embedded():
    cfg = HeadConfig()
    embed = nn.Linear(cfg.n_features, cfg.emb_dim * cfg.n_features)
    head = nn.Linear(cfg.emb_dim * cfg.n_features, cfg.hidden)
    return head(embed(torch.randn(32, cfg.n_features)))  # clean

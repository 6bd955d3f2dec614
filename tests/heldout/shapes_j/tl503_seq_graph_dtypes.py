"""TL503 probe: dtype traps in seq2seq, graph and captioning code: teacher-forcing targets cast
with `.float()` for label smoothing then given to `cross_entropy` as class indices, caption tokens
made float by a `torch.where` with a float fill and embedded, node features gathered with an edge
index built by `torch.linspace`, an integer adjacency built with `torch.zeros(..., dtype=torch.long)`
multiplied with float node features, and beam scores gathered with float beam indices from
`torch.div`; against `.long()` targets, `torch.where` with an integer fill, `torch.arange` index
rows, `.float()` before the product, and `rounding_mode="floor"` division of integer indices.
Each `case_*` function runs with torch (tests/shapes/test_definite_errors_runtime.py)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def case_teacher_forcing_float_targets():
    logits = torch.randn(8, 1000)
    targets = torch.randint(0, 1000, (8,)).float()
    return F.cross_entropy(logits, targets, label_smoothing=0.1)  # expect: TL503


def case_teacher_forcing_long_targets():
    logits = torch.randn(8, 1000)
    targets = torch.randint(0, 1000, (8,))
    return F.cross_entropy(logits, targets.long(), label_smoothing=0.1)  # clean


def case_caption_tokens_float_after_padding():
    emb = nn.Embedding(500, 32)
    tokens = torch.randint(0, 500, (4, 16))
    lengths_mask = torch.rand(4, 16) < 0.8
    padded = torch.where(lengths_mask, tokens, 0.0)
    return emb(padded)  # expect: TL503


def case_caption_tokens_int_padding():
    emb = nn.Embedding(500, 32)
    tokens = torch.randint(0, 500, (4, 16))
    lengths_mask = torch.rand(4, 16) < 0.8
    padded = torch.where(lengths_mask, tokens, 0)
    return emb(padded)  # clean


def case_edge_index_from_linspace():
    x = torch.randn(10, 16)
    src = torch.linspace(0, 9, 20)
    return x[src]  # expect: TL503


def case_edge_index_from_arange():
    x = torch.randn(10, 16)
    src = torch.arange(20) % 10
    return x[src]  # clean


def case_integer_adjacency_times_features():
    adj = torch.zeros(10, 10, dtype=torch.long)
    adj[0, 1] = adj[1, 0] = 1
    feats = torch.randn(10, 16)
    return adj @ feats  # expect: TL503


def case_float_adjacency_times_features():
    adj = torch.zeros(10, 10, dtype=torch.long)
    adj[0, 1] = adj[1, 0] = 1
    feats = torch.randn(10, 16)
    return adj.float() @ feats  # clean


def case_beam_indices_true_division():
    scores = torch.randn(2, 4 * 100)
    flat = scores.topk(4, dim=-1).indices
    beam_idx = torch.div(flat, 100)
    beams = torch.randn(2, 4, 7)
    return beams.gather(1, beam_idx.unsqueeze(-1).expand(-1, -1, 7))  # expect: TL503


def case_beam_indices_floor_division():
    scores = torch.randn(2, 4 * 100)
    flat = scores.topk(4, dim=-1).indices
    beam_idx = torch.div(flat, 100, rounding_mode="floor")
    beams = torch.randn(2, 4, 7)
    return beams.gather(1, beam_idx.unsqueeze(-1).expand(-1, -1, 7))  # clean

"""TL501 probe: incremental decoding and pooling heads: a KV cache extended along the heads axis instead
of the time axis, a multi-query attention whose single key head is expanded to the wrong head count, a
CLS-plus-mean pooled head sized for one of the two, and attention-pooling weights that lost their
last axis; against the cache concatenated on dim 2, `expand` to the query's heads, a `2 * dim` head, and
weights kept with `unsqueeze(-1)`.
Each `case_*` function runs with torch (tests/shapes/test_definite_errors_runtime.py)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def case_cache_on_heads_axis():
    past_k = torch.randn(1, 8, 31, 64)
    new_k = torch.randn(1, 8, 1, 64)
    q = torch.randn(1, 8, 1, 64)
    k = torch.cat([past_k, new_k], dim=1)  # expect: TL501
    return q @ k.transpose(-2, -1)


def case_cache_on_time_axis():
    past_k = torch.randn(1, 8, 31, 64)
    new_k = torch.randn(1, 8, 1, 64)
    q = torch.randn(1, 8, 1, 64)
    k = torch.cat([past_k, new_k], dim=2)  # clean
    return q @ k.transpose(-2, -1)  # clean


def case_multi_query_wrong_heads():
    q = torch.randn(2, 12, 16, 64)
    k = torch.randn(2, 1, 16, 64)
    return q @ k.expand(2, 8, 16, 64).transpose(-2, -1)  # expect: TL501


def case_multi_query():
    q = torch.randn(2, 12, 16, 64)
    k = torch.randn(2, 1, 16, 64)
    v = torch.randn(2, 1, 16, 64)
    scores = q @ k.transpose(-2, -1)  # clean: the single key head broadcasts
    return F.softmax(scores, dim=-1) @ v.expand(-1, 12, -1, -1)  # clean


def case_cls_plus_mean_head():
    hidden = torch.randn(4, 128, 768)
    pooled = torch.cat([hidden[:, 0], hidden.mean(1)], dim=-1)
    return nn.Linear(768, 2)(pooled)  # expect: TL501


def case_cls_plus_mean_head_sized():
    hidden = torch.randn(4, 128, 768)
    pooled = torch.cat([hidden[:, 0], hidden.mean(1)], dim=-1)
    return nn.Linear(2 * 768, 2)(pooled)  # clean


def case_attention_pooling_weights_squeezed():
    hidden = torch.randn(4, 50, 256)
    weights = F.softmax(nn.Linear(256, 1)(hidden).squeeze(-1), dim=1)
    return (hidden * weights).sum(1)  # expect: TL501


def case_attention_pooling():
    hidden = torch.randn(4, 50, 256)
    weights = F.softmax(nn.Linear(256, 1)(hidden).squeeze(-1), dim=1)
    return (hidden * weights.unsqueeze(-1)).sum(1)  # clean

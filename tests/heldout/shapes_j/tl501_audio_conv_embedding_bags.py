"""TL501 probe: 1-D convolution stacks over audio features and pooled embeddings of sequences: a
log-mel batch (B, T, 80) fed to a `Conv1d(80, ...)` without moving mels to the channel dim, a stack
whose second conv expects the first's input channels, a strided frontend whose frame count is
assumed to be the sample count in a `Linear` over time, an `EmbeddingBag` output fed to a head sized
for concatenated mean and max pools, and a masked mean over a sequence divided by the token counts
without `keepdim`; against `transpose(1, 2)`, matching channels, a `Linear` over channels after
pooling, the concatenated width computed from both pools, and `sum(1, keepdim=True)`.
Each `case_*` function runs with torch (tests/shapes/test_definite_errors_runtime.py)."""
import torch
import torch.nn as nn


def case_mels_not_on_channel_dim():
    mels = torch.randn(4, 300, 80)
    conv = nn.Conv1d(80, 256, kernel_size=5, padding=2)
    return conv(mels)  # expect: TL501


def case_mels_transposed():
    mels = torch.randn(4, 300, 80)
    conv = nn.Conv1d(80, 256, kernel_size=5, padding=2)
    return conv(mels.transpose(1, 2))  # clean


def case_stack_channels_repeat_input():
    stack = nn.Sequential(
        nn.Conv1d(80, 128, kernel_size=3, padding=1), nn.ReLU(),
        nn.Conv1d(80, 128, kernel_size=3, padding=1), nn.ReLU(),
    )
    return stack(torch.randn(4, 80, 300))  # expect: TL501


def case_stack_channels_chain():
    stack = nn.Sequential(
        nn.Conv1d(80, 128, kernel_size=3, padding=1), nn.ReLU(),
        nn.Conv1d(128, 128, kernel_size=3, padding=1), nn.ReLU(),
    )
    return stack(torch.randn(4, 80, 300))  # clean


def case_strided_frames_taken_as_samples():
    wave = torch.randn(8, 1, 16000)
    frontend = nn.Conv1d(1, 64, kernel_size=400, stride=160)
    frames = frontend(wave)
    over_time = nn.Linear(16000, 1)
    return over_time(frames)  # expect: TL501


def case_pool_over_time_then_channels():
    wave = torch.randn(8, 1, 16000)
    frontend = nn.Conv1d(1, 64, kernel_size=400, stride=160)
    frames = frontend(wave)
    head = nn.Linear(64, 10)
    return head(frames.mean(-1))  # clean


def case_embedding_bag_head_for_two_pools():
    bag = nn.EmbeddingBag(1000, 64, mode="mean")
    tokens = torch.randint(0, 1000, (30,))
    offsets = torch.tensor([0, 7, 19])
    head = nn.Linear(128, 2)
    return head(bag(tokens, offsets))  # expect: TL501


def case_embedding_mean_and_max_pools():
    emb = nn.Embedding(1000, 64)
    h = emb(torch.randint(0, 1000, (3, 12)))
    pooled = torch.cat([h.mean(1), h.amax(1)], dim=-1)
    head = nn.Linear(128, 2)
    return head(pooled)  # clean


def case_masked_mean_without_keepdim():
    h = torch.randn(4, 12, 64)
    mask = torch.ones(4, 12)
    summed = (h * mask.unsqueeze(-1)).sum(1)
    return summed / mask.sum(1)  # expect: TL501


def case_masked_mean_keepdim():
    h = torch.randn(4, 12, 64)
    mask = torch.ones(4, 12)
    summed = (h * mask.unsqueeze(-1)).sum(1)
    return summed / mask.sum(1, keepdim=True).clamp(min=1)  # clean

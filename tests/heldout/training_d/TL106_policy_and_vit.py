"""TL106 probe: factories inside `forward` of an RL policy (an initial LSTM state passed to the LSTM in a
tuple, Gaussian exploration noise added to the action) and of a windowed attention block (a causal mask
built with `torch.ones(...).triu(1)` for `masked_fill`); near misses take the device from the input, use
`*_like`/`new_*`, build a 0-d constant, use a CPU `arange` only as an index (indexing a GPU tensor with CPU
indices works), draw a one-element number only to decide a branch, or build in `__init__`."""
import torch
from torch import nn


class RecurrentActor(nn.Module):
    def __init__(self, obs_dim=24, act_dim=4, hidden=128, noise_std=0.1):
        super().__init__()
        self.hidden = hidden
        self.encoder = nn.Linear(obs_dim, hidden)
        self.lstm = nn.LSTM(hidden, hidden, batch_first=True)
        self.head = nn.Linear(hidden, act_dim)
        self.noise_std = noise_std

    def forward(self, obs_seq, explore: bool = True):
        b = obs_seq.size(0)
        h0 = torch.zeros(1, b, self.hidden)  # expect: TL106
        c0 = torch.zeros_like(h0)  # clean
        out, _ = self.lstm(torch.relu(self.encoder(obs_seq)), (h0, c0))
        action = torch.tanh(self.head(out[:, -1]))
        if explore:
            action = action + self.noise_std * torch.randn(action.shape)  # expect: TL106
        return action.clamp(-1.0, 1.0)


class RecurrentActorFixed(RecurrentActor):
    def forward(self, obs_seq, explore: bool = True):
        b = obs_seq.size(0)
        h0 = obs_seq.new_zeros(1, b, self.hidden)  # clean
        out, _ = self.lstm(torch.relu(self.encoder(obs_seq)), (h0, torch.zeros_like(h0)))
        action = torch.tanh(self.head(out[:, -1]))
        if explore and torch.rand(1).item() < 0.9:  # clean
            action = action + self.noise_std * torch.randn_like(action)  # clean
        return action.clamp(-1.0, 1.0)


class RelPosAttention(nn.Module):
    def __init__(self, dim=192, heads=3, window=7):
        super().__init__()
        self.heads = heads
        self.window = window
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)
        self.bias_table = nn.Parameter(torch.zeros((2 * window - 1), heads))  # clean

    def forward(self, x):
        b, n, c = x.shape
        coords = torch.arange(n)  # clean
        rel = coords[:, None] - coords[None, :] + self.window - 1
        bias = self.bias_table[rel.clamp(0, 2 * self.window - 2)].permute(2, 0, 1)
        q, k, v = self.qkv(x).reshape(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        scale = torch.tensor(c // self.heads) ** -0.5  # clean
        attn = (q @ k.transpose(-2, -1)) * scale + bias
        future = torch.ones(n, n, dtype=torch.bool).triu(1)  # expect: TL106
        attn = attn.masked_fill(future, float("-inf"))
        return self.proj((attn.softmax(dim=-1) @ v).transpose(1, 2).reshape(b, n, c))

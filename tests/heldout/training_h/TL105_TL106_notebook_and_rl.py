"""TL105/TL106 probe: a notebook-style script that defines `device` from `torch.cuda.is_available()`
and later moves the target network with `.cuda()` and a replay batch with `.to("cuda")`, plus modules
whose `forward` builds causal masks, positional ids, noise and one-hot tensors without a device;
near misses build masks with `device=x.device`, `torch.ones_like`, `x.new_zeros`, a factory fed only
by Python numbers in `__init__` (registered as a buffer), and `torch.device("cuda", rank)` used to make
the device variable."""
import os

import torch
import torch.nn.functional as F
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
rank_device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))  # clean


class QNet(nn.Module):
    def __init__(self, obs_dim, n_actions):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, 256), nn.ReLU(), nn.Linear(256, n_actions))

    def forward(self, obs):
        return self.body(obs)


class NoisyQNet(QNet):
    def forward(self, obs):
        noise = torch.randn(obs.shape[0], obs.shape[1]) * 0.01  # expect: TL106
        return self.body(obs + noise)


class NoisyQNetOnDevice(QNet):
    def forward(self, obs):
        noise = torch.randn(obs.shape[0], obs.shape[1], device=obs.device) * 0.01  # clean
        return self.body(obs + noise)


class CausalBlock(nn.Module):
    def __init__(self, dim, heads, max_len=1024):
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.pos = nn.Embedding(max_len, dim)
        self.register_buffer("table", torch.arange(max_len), persistent=False)  # clean

    def forward(self, x):
        T = x.size(1)
        positions = torch.arange(T)  # expect: TL106
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # expect: TL106
        h = x + self.pos(positions)
        return self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]


class CausalBlockOnDevice(CausalBlock):
    def forward(self, x):
        T = x.size(1)
        positions = torch.arange(T, device=x.device)  # clean
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool, device=x.device), diagonal=1)  # clean
        keep = torch.ones_like(x[..., 0])  # clean
        pad = x.new_zeros(x.size(0), 1, x.size(2))  # clean
        h = torch.cat([pad, x + self.pos(positions)], dim=1)[:, 1:] * keep.unsqueeze(-1)
        return self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]


class OneHotPolicy(nn.Module):
    def __init__(self, n_actions, dim):
        super().__init__()
        self.n_actions = n_actions
        self.net = nn.Linear(dim + n_actions, n_actions)

    def forward(self, obs, prev_action):
        onehot = torch.zeros(obs.size(0), self.n_actions)  # expect: TL106
        onehot[torch.arange(obs.size(0), device=obs.device), prev_action] = 1.0
        return self.net(torch.cat([obs, onehot], dim=-1))


online = QNet(8, 4).to(device)
target = QNet(8, 4).cuda()  # expect: TL105
target.load_state_dict(online.state_dict())
optimizer = torch.optim.Adam(online.parameters(), lr=1e-4)


def td_step(batch, gamma=0.99):
    obs, actions, rewards, next_obs, dones = (t.to("cuda") for t in batch)  # expect: TL105
    with torch.no_grad():
        target_q = rewards + gamma * (1 - dones) * target(next_obs).max(-1).values
    q = online(obs).gather(1, actions.unsqueeze(-1)).squeeze(-1)
    loss = F.smooth_l1_loss(q, target_q)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    return loss.detach()


def td_step_on_device(batch, gamma=0.99):
    obs, actions, rewards, next_obs, dones = (t.to(device, non_blocking=True) for t in batch)  # clean
    with torch.no_grad():
        target_q = rewards + gamma * (1 - dones) * target(next_obs).max(-1).values
    q = online(obs).gather(1, actions.unsqueeze(-1)).squeeze(-1)
    loss = F.smooth_l1_loss(q, target_q)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    return loss.detach()


replay_buffer = torch.zeros(10_000, 8, device="cuda")  # expect: TL105
priorities = torch.zeros(10_000, device=device)  # clean

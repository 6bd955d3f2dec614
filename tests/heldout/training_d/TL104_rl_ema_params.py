"""TL104 probe: an EMA teacher made with `copy.deepcopy` (its parameters still require grad) updated in
place outside no_grad, a learnable log-std clamped in a policy's forward, and a temperature parameter
rescaled in a training step; near misses update through `.data`, inside `torch.no_grad()` or
`torch.inference_mode()`, or change a non-leaf result."""
import copy

import torch
from torch import nn
from torch.distributions import Normal


class GaussianPolicy(nn.Module):
    def __init__(self, obs_dim=17, act_dim=6, hidden=256):
        super().__init__()
        self.mu = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, act_dim))
        self.log_std = nn.Parameter(torch.full((act_dim,), -0.5))

    def forward(self, obs):
        self.log_std.clamp_(-20.0, 2.0)  # expect: TL104
        return Normal(self.mu(obs), self.log_std.exp())


class GaussianPolicySafe(GaussianPolicy):
    def forward(self, obs):
        std = self.log_std.clamp(-20.0, 2.0).exp()  # clean
        return Normal(self.mu(obs), std)


class MeanTeacher:
    def __init__(self, student: nn.Module, decay=0.999):
        self.student = student
        self.teacher = copy.deepcopy(student)
        self.decay = decay

    def update(self):
        for t, s in zip(self.teacher.parameters(), self.student.parameters()):
            t.mul_(self.decay).add_(s.detach(), alpha=1 - self.decay)  # expect: TL104

    def update_safe(self):
        with torch.no_grad():
            for t, s in zip(self.teacher.parameters(), self.student.parameters()):
                t.lerp_(s, 1 - self.decay)  # clean

    def update_inference(self):
        with torch.inference_mode():
            for t, s in zip(self.teacher.parameters(), self.student.parameters()):
                t.copy_(s)  # clean


class ContrastiveLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.temperature = nn.Parameter(torch.tensor(0.07))

    def forward(self, q, k):
        logits = q @ k.T / self.temperature
        logits -= logits.max(dim=1, keepdim=True).values.detach()  # clean
        return nn.functional.cross_entropy(logits, torch.arange(q.size(0), device=q.device))


def train_step(loss_mod: ContrastiveLoss, q, k, optimizer):
    optimizer.zero_grad(set_to_none=True)
    loss = loss_mod(q, k)
    loss.backward()
    optimizer.step()
    loss_mod.temperature.data.clamp_(0.01, 1.0)  # clean
    return loss.detach()


def train_step_unsafe(loss_mod: ContrastiveLoss, q, k, optimizer):
    optimizer.zero_grad(set_to_none=True)
    loss = loss_mod(q, k)
    loss.backward()
    optimizer.step()
    loss_mod.temperature.clamp_(0.01, 1.0)  # expect: TL104
    return loss.detach()

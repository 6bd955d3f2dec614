"""TL601 probe: code that only looks like compiled code: a `torch.jit.script` function, the
training loop around a compiled model (its `.item()` runs eagerly), a module class that is
defined next to a compiled one but never compiled itself, a `re.compile` pattern, code inside
`if not torch.compiler.is_compiling():`, `.size()`/`.shape`/`numel()` branches, and a
`fullgraph=True` compiled step whose `print` is still a graph break (an error, in fact), plus a
helper function called from a compiled function that reads `.item()` (Dynamo inlines the call,
so the break is in the compiled graph)."""
import logging
import re

import torch
from torch import nn
from torch.nn import functional as F

log = logging.getLogger(__name__)
CKPT_PATTERN = re.compile(r"step_(\d+)\.pt")


@torch.jit.script
def clipped_ratio(ratio: torch.Tensor, eps: float) -> torch.Tensor:
    if bool(ratio.max() > 1.0 + eps):  # clean
        ratio = ratio.clamp(1.0 - eps, 1.0 + eps)
    return ratio


class Policy(nn.Module):
    def __init__(self, obs_dim=8, n_actions=4, hidden=64):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.pi = nn.Linear(hidden, n_actions)
        self.v = nn.Linear(hidden, 1)

    def forward(self, obs):
        if obs.dim() == 1:  # clean
            obs = obs.unsqueeze(0)
        if obs.shape[0] == 0 or obs.numel() == 0:  # clean
            raise ValueError("empty batch")
        h = self.body(obs)
        return self.pi(h), self.v(h).squeeze(-1)


class Baseline(nn.Module):
    def __init__(self, obs_dim=8):
        super().__init__()
        self.v = nn.Linear(obs_dim, 1)

    def forward(self, obs):
        value = self.v(obs)
        if value.mean() > 100:  # clean
            print("value explosion", value.max().item())  # clean
        return value


policy = Policy()
compiled_policy = torch.compile(policy)
baseline = Baseline()


def entropy_of(logits):
    return (-(logits.softmax(-1) * logits.log_softmax(-1)).sum(-1)).mean().item()  # expect: TL601


@torch.compile(fullgraph=True)
def ppo_loss(logits, values, actions, old_logp, advantages, returns, clip=0.2):
    logp = torch.distributions.Categorical(logits=logits).log_prob(actions)
    ratio = (logp - old_logp).exp()
    if not torch.compiler.is_compiling():  # clean
        print("eager ppo loss")
    surrogate = torch.min(ratio * advantages, ratio.clamp(1 - clip, 1 + clip) * advantages)
    print("clip fraction", ((ratio - 1).abs() > clip).float().mean())  # expect: TL601
    return -surrogate.mean() + 0.5 * F.mse_loss(values, returns)


@torch.compile
def policy_stats(logits):
    probs = logits.softmax(-1)
    return {"entropy": entropy_of(logits), "max_prob": probs.max(-1).values.mean()}


def train(rollouts, optimizer, epochs=4, log_every=10):
    compiled_policy.train()
    for epoch in range(epochs):
        for step, (obs, actions, old_logp, adv, ret) in enumerate(rollouts):
            logits, values = compiled_policy(obs)
            loss = ppo_loss(logits, values, actions, old_logp, adv, ret)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            if step % log_every == 0:
                log.info("epoch %d step %d loss %.4f", epoch, step, loss.item())  # clean


def latest_step(names):
    steps = [int(m.group(1)) for m in map(CKPT_PATTERN.search, names) if m]
    return max(steps, default=0)

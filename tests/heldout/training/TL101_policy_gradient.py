"""TL101 probe: REINFORCE / actor-critic updates where gradients are cleared per epoch instead of per step,
or cleared through the module rather than the optimizer."""
import gymnasium as gym
import torch
import torch.nn as nn
from torch.distributions import Categorical


class Policy(nn.Module):
    def __init__(self, obs_dim=4, n_actions=2, hidden=128):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, n_actions))

    def forward(self, obs):
        return Categorical(logits=self.body(obs))


def discounted(rewards, gamma=0.99):
    out, running = [], 0.0
    for r in reversed(rewards):
        running = r + gamma * running
        out.append(running)
    return torch.as_tensor(out[::-1], dtype=torch.float32)


def reinforce(policy, env: gym.Env, episodes=500, lr=1e-2):
    optimizer = torch.optim.Adam(policy.parameters(), lr=lr)
    for episode in range(episodes):  # expect: TL101
        obs, _ = env.reset()
        log_probs, rewards, done = [], [], False
        while not done:
            dist = policy(torch.as_tensor(obs, dtype=torch.float32))
            action = dist.sample()
            log_probs.append(dist.log_prob(action))
            obs, reward, terminated, truncated, _ = env.step(int(action))
            rewards.append(reward)
            done = terminated or truncated
        returns = discounted(rewards)
        returns = (returns - returns.mean()) / (returns.std() + 1e-8)
        loss = -(torch.stack(log_probs) * returns).sum()
        loss.backward()
        optimizer.step()


def reinforce_module_clear(policy, env: gym.Env, episodes=500, lr=1e-2):
    optimizer = torch.optim.Adam(policy.parameters(), lr=lr)
    for episode in range(episodes):  # clean
        policy.zero_grad()
        obs, _ = env.reset()
        log_probs, rewards, done = [], [], False
        while not done:
            dist = policy(torch.as_tensor(obs, dtype=torch.float32))
            action = dist.sample()
            log_probs.append(dist.log_prob(action))
            obs, reward, terminated, truncated, _ = env.step(int(action))
            rewards.append(reward)
            done = terminated or truncated
        loss = -(torch.stack(log_probs) * discounted(rewards)).sum()
        loss.backward()
        optimizer.step()


def fit_value_net(value_net, optimizer, rollouts, epochs=4):
    for epoch in range(epochs):
        optimizer.zero_grad()
        for obs, ret in rollouts:  # expect: TL101
            loss = (value_net(obs).squeeze(-1) - ret).pow(2).mean()
            loss.backward()
            optimizer.step()


def fit_value_net_fixed(value_net, optimizer, rollouts, epochs=4):
    for epoch in range(epochs):
        for obs, ret in rollouts:  # clean
            optimizer.zero_grad(set_to_none=True)
            loss = (value_net(obs).squeeze(-1) - ret).pow(2).mean()
            loss.backward()
            optimizer.step()

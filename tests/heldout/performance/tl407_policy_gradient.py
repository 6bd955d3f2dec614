"""TL407 probe: a REINFORCE agent that clears gradients by filling zeros (`fill_(0)` over the
parameters, `zero_grad(False)` positionally), against `set_to_none=True`, `p.grad = None` and a
`.zero_()` on a reward buffer that is not a gradient."""
import torch
import torch.nn as nn
from torch.distributions import Categorical


class Policy(nn.Module):
    def __init__(self, obs_dim=4, n_actions=2, hidden=128):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, n_actions))
        self.register_buffer("episode_return", torch.zeros(()))

    def forward(self, obs):
        return Categorical(logits=self.net(obs))


def reinforce(env, policy, episodes=500, gamma=0.99, lr=1e-2):
    optimizer = torch.optim.Adam(policy.parameters(), lr=lr)
    for episode in range(episodes):
        obs, _ = env.reset()
        log_probs, rewards, done = [], [], False
        while not done:
            dist = policy(torch.as_tensor(obs, dtype=torch.float32))
            action = dist.sample()
            log_probs.append(dist.log_prob(action))
            obs, reward, terminated, truncated, _ = env.step(action.item())
            rewards.append(reward)
            done = terminated or truncated
        returns, g = [], 0.0
        for r in reversed(rewards):
            g = r + gamma * g
            returns.insert(0, g)
        returns = torch.tensor(returns)
        returns = (returns - returns.mean()) / (returns.std() + 1e-8)
        for p in policy.parameters():
            if p.grad is not None:
                p.grad.fill_(0)  # expect: TL407
        loss = -(torch.stack(log_probs) * returns).sum()
        loss.backward()
        optimizer.step()
        policy.episode_return.zero_()  # clean
        policy.episode_return += sum(rewards)
    return policy


def reinforce_batched(env_batch, policy, updates=200, lr=1e-2):
    optimizer = torch.optim.Adam(policy.parameters(), lr=lr)
    for update in range(updates):
        optimizer.zero_grad(False)  # expect: TL407
        loss = env_batch.rollout_loss(policy)
        loss.backward()
        optimizer.step()
    return policy


def reinforce_fixed(env_batch, policy, updates=200, lr=1e-2):
    optimizer = torch.optim.Adam(policy.parameters(), lr=lr)
    for update in range(updates):
        optimizer.zero_grad(set_to_none=True)  # clean
        env_batch.rollout_loss(policy).backward()
        optimizer.step()
        for p in policy.parameters():
            p.grad = None  # clean
    return policy

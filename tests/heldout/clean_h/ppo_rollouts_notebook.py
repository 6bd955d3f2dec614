# PPO on a vectorised CartPole, notebook style: cells run top to bottom.
import gymnasium as gym
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
envs = gym.vector.SyncVectorEnv([lambda: gym.make("CartPole-v1") for _ in range(8)])
obs_dim = envs.single_observation_space.shape[0]
n_actions = envs.single_action_space.n


class ActorCritic(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=64):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.pi = nn.Linear(hidden, n_actions)
        self.v = nn.Linear(hidden, 1)

    def forward(self, obs):
        h = self.body(obs)
        return self.pi(h), self.v(h).squeeze(-1)


agent = ActorCritic(obs_dim, n_actions).to(device)
optimizer = torch.optim.Adam(agent.parameters(), lr=2.5e-4, eps=1e-5)

# %% rollout storage
T, N = 128, 8
obs_buf = torch.zeros(T, N, obs_dim, device=device)
act_buf = torch.zeros(T, N, dtype=torch.long, device=device)
logp_buf = torch.zeros(T, N, device=device)
rew_buf = torch.zeros(T, N, device=device)
done_buf = torch.zeros(T, N, device=device)
val_buf = torch.zeros(T, N, device=device)

# %% training
obs, _ = envs.reset(seed=0)
obs = torch.as_tensor(obs, dtype=torch.float32, device=device)
for update in range(200):
    with torch.no_grad():
        for t in range(T):
            logits, value = agent(obs)
            dist = torch.distributions.Categorical(logits=logits)
            action = dist.sample()
            obs_buf[t], act_buf[t], logp_buf[t], val_buf[t] = obs, action, dist.log_prob(action), value
            next_obs, reward, term, trunc, _ = envs.step(action.cpu().numpy())
            rew_buf[t] = torch.as_tensor(reward, device=device)
            done_buf[t] = torch.as_tensor(np.logical_or(term, trunc), dtype=torch.float32, device=device)
            obs = torch.as_tensor(next_obs, dtype=torch.float32, device=device)
        _, next_value = agent(obs)
        adv = torch.zeros_like(rew_buf)
        last = torch.zeros(N, device=device)
        for t in reversed(range(T)):
            nv = next_value if t == T - 1 else val_buf[t + 1]
            delta = rew_buf[t] + 0.99 * nv * (1 - done_buf[t]) - val_buf[t]
            last = delta + 0.99 * 0.95 * (1 - done_buf[t]) * last
            adv[t] = last
        returns = adv + val_buf

    b_obs, b_act, b_logp = obs_buf.flatten(0, 1), act_buf.flatten(), logp_buf.flatten()
    b_adv, b_ret = adv.flatten(), returns.flatten()
    for epoch in range(4):
        for idx in torch.randperm(T * N, device=device).split(256):
            logits, value = agent(b_obs[idx])
            dist = torch.distributions.Categorical(logits=logits)
            ratio = (dist.log_prob(b_act[idx]) - b_logp[idx]).exp()
            a = (b_adv[idx] - b_adv[idx].mean()) / (b_adv[idx].std() + 1e-8)
            pg = -torch.min(ratio * a, ratio.clamp(0.8, 1.2) * a).mean()
            loss = pg + 0.5 * F.mse_loss(value, b_ret[idx]) - 0.01 * dist.entropy().mean()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
            optimizer.step()
    if update % 10 == 0:
        print(update, rew_buf.sum(0).mean().item(), loss.item())

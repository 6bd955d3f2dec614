"""Clean script: synchronous advantage actor-critic (A2C) on a vectorised gymnasium
environment: a shared-trunk actor-critic, n-step rollouts collected under `torch.no_grad()`,
bootstrapped returns, one optimizer stepped on policy + value + entropy losses with gradient
clipping, a linear learning-rate decay stepped after the optimizer, episode returns logged as
Python floats, and a greedy evaluation in eval mode under `torch.inference_mode()`."""
import gymnasium as gym
import numpy as np
import torch
from torch import nn
from torch.distributions import Categorical

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class ActorCritic(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=256):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.pi = nn.Linear(hidden, n_actions)
        self.v = nn.Linear(hidden, 1)

    def forward(self, obs):
        h = self.trunk(obs)
        return Categorical(logits=self.pi(h)), self.v(h).squeeze(-1)


def evaluate(agent, env_id, episodes=10, seed=123):
    env = gym.make(env_id)
    agent.eval()
    returns = []
    with torch.inference_mode():
        for ep in range(episodes):
            obs, _ = env.reset(seed=seed + ep)
            done, total = False, 0.0
            while not done:
                dist, _ = agent(torch.as_tensor(obs, dtype=torch.float32, device=device)[None])
                obs, reward, terminated, truncated, _ = env.step(int(dist.probs.argmax(dim=-1)[0]))
                total += float(reward)
                done = terminated or truncated
            returns.append(total)
    agent.train()
    return float(np.mean(returns))


def main(env_id="LunarLander-v3", n_envs=16, n_steps=5, updates=20_000, gamma=0.99):
    envs = gym.vector.SyncVectorEnv([lambda: gym.make(env_id) for _ in range(n_envs)])
    obs_dim = envs.single_observation_space.shape[0]
    agent = ActorCritic(obs_dim, envs.single_action_space.n).to(device)
    optimizer = torch.optim.RMSprop(agent.parameters(), lr=7e-4, alpha=0.99, eps=1e-5)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda u: 1.0 - u / updates)
    obs, _ = envs.reset(seed=0)
    obs = torch.as_tensor(obs, dtype=torch.float32, device=device)
    episode_return = np.zeros(n_envs)
    finished = []
    agent.train()
    for update in range(updates):
        obs_buf, act_buf, rew_buf, done_buf = [], [], [], []
        with torch.no_grad():
            for _ in range(n_steps):
                dist, _ = agent(obs)
                action = dist.sample()
                next_obs, reward, terminated, truncated, _ = envs.step(action.cpu().numpy())
                done = np.logical_or(terminated, truncated)
                episode_return += reward
                finished.extend(episode_return[done].tolist())
                episode_return[done] = 0.0
                obs_buf.append(obs)
                act_buf.append(action)
                rew_buf.append(torch.as_tensor(reward, dtype=torch.float32, device=device))
                done_buf.append(torch.as_tensor(done, dtype=torch.float32, device=device))
                obs = torch.as_tensor(next_obs, dtype=torch.float32, device=device)
            _, bootstrap = agent(obs)
            returns, running = [], bootstrap
            for r, d in zip(reversed(rew_buf), reversed(done_buf)):
                running = r + gamma * running * (1.0 - d)
                returns.append(running)
            returns = torch.stack(returns[::-1]).flatten()

        dist, values = agent(torch.cat(obs_buf))
        advantages = returns - values
        policy_loss = -(dist.log_prob(torch.cat(act_buf)) * advantages.detach()).mean()
        value_loss = 0.5 * advantages.pow(2).mean()
        loss = policy_loss + 0.5 * value_loss - 0.01 * dist.entropy().mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
        optimizer.step()
        scheduler.step()

        if update % 1000 == 0 and finished:
            print(f"update {update}: mean return {np.mean(finished[-50:]):.1f} eval {evaluate(agent, env_id):.1f}")
    torch.save(agent.state_dict(), "a2c.pt")


if __name__ == "__main__":
    main()

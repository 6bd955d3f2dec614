"""Clean script: PPO with GAE on a vectorised gymnasium environment (rollout buffer, clipped surrogate,
value clipping, entropy bonus, minibatch epochs, gradient clipping, greedy evaluation)."""
import argparse

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Categorical


def layer(in_dim, out_dim, gain=np.sqrt(2)):
    linear = nn.Linear(in_dim, out_dim)
    nn.init.orthogonal_(linear.weight, gain)
    nn.init.zeros_(linear.bias)
    return linear


class ActorCritic(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=64):
        super().__init__()
        self.actor = nn.Sequential(layer(obs_dim, hidden), nn.Tanh(), layer(hidden, hidden), nn.Tanh(),
                                   layer(hidden, n_actions, gain=0.01))
        self.critic = nn.Sequential(layer(obs_dim, hidden), nn.Tanh(), layer(hidden, hidden), nn.Tanh(),
                                    layer(hidden, 1, gain=1.0))

    def value(self, obs):
        return self.critic(obs).squeeze(-1)

    def forward(self, obs, action=None):
        dist = Categorical(logits=self.actor(obs))
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.value(obs)


def gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    advantages = torch.zeros_like(rewards)
    next_adv = torch.zeros_like(last_value)
    next_value = last_value
    for t in reversed(range(rewards.size(0))):
        not_done = 1.0 - dones[t]
        delta = rewards[t] + gamma * next_value * not_done - values[t]
        next_adv = delta + gamma * lam * not_done * next_adv
        advantages[t] = next_adv
        next_value = values[t]
    return advantages, advantages + values


def collect(envs, agent, obs, n_steps, device):
    n_envs = envs.num_envs
    buf = {
        "obs": torch.zeros((n_steps, n_envs) + envs.single_observation_space.shape, device=device),
        "actions": torch.zeros((n_steps, n_envs), dtype=torch.long, device=device),
        "log_probs": torch.zeros((n_steps, n_envs), device=device),
        "rewards": torch.zeros((n_steps, n_envs), device=device),
        "dones": torch.zeros((n_steps, n_envs), device=device),
        "values": torch.zeros((n_steps, n_envs), device=device),
    }
    with torch.no_grad():
        for t in range(n_steps):
            obs_t = torch.as_tensor(obs, dtype=torch.float32, device=device)
            action, log_prob, _, value = agent(obs_t)
            obs, reward, terminated, truncated, _ = envs.step(action.cpu().numpy())
            buf["obs"][t], buf["actions"][t], buf["log_probs"][t], buf["values"][t] = obs_t, action, log_prob, value
            buf["rewards"][t] = torch.as_tensor(reward, dtype=torch.float32, device=device)
            buf["dones"][t] = torch.as_tensor(terminated | truncated, dtype=torch.float32, device=device)
        last_value = agent.value(torch.as_tensor(obs, dtype=torch.float32, device=device))
    buf["advantages"], buf["returns"] = gae(buf["rewards"], buf["values"], buf["dones"], last_value)
    return obs, buf


def update(agent, optimizer, buf, epochs=4, minibatches=4, clip=0.2, vf_coef=0.5, ent_coef=0.01):
    flat = {k: v.flatten(0, 1) for k, v in buf.items() if k != "obs"}
    flat["obs"] = buf["obs"].flatten(0, 1)
    n = flat["obs"].size(0)
    mb_size = n // minibatches
    agent.train()
    for _ in range(epochs):
        perm = torch.randperm(n, device=flat["obs"].device)
        for start in range(0, n, mb_size):
            idx = perm[start: start + mb_size]
            _, new_log_prob, entropy, new_value = agent(flat["obs"][idx], flat["actions"][idx])
            ratio = (new_log_prob - flat["log_probs"][idx]).exp()
            adv = flat["advantages"][idx]
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            policy_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - clip, 1 + clip)).mean()
            value_loss = 0.5 * (new_value - flat["returns"][idx]).pow(2).mean()
            loss = policy_loss + vf_coef * value_loss - ent_coef * entropy.mean()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
            optimizer.step()


@torch.inference_mode()
def evaluate(agent, env_id, device, episodes=10):
    agent.eval()
    env = gym.make(env_id)
    returns = []
    for ep in range(episodes):
        obs, _ = env.reset(seed=ep)
        done, total = False, 0.0
        while not done:
            logits = agent.actor(torch.as_tensor(obs, dtype=torch.float32, device=device))
            obs, reward, terminated, truncated, _ = env.step(int(logits.argmax()))
            total += reward
            done = terminated or truncated
        returns.append(total)
    return float(np.mean(returns))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--env", default="CartPole-v1")
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--steps", type=int, default=128)
    parser.add_argument("--iterations", type=int, default=300)
    args = parser.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    envs = gym.vector.SyncVectorEnv([lambda: gym.make(args.env) for _ in range(args.num_envs)])
    agent = ActorCritic(envs.single_observation_space.shape[0], envs.single_action_space.n).to(device)
    optimizer = torch.optim.Adam(agent.parameters(), lr=2.5e-4, eps=1e-5)
    scheduler = torch.optim.lr_scheduler.LinearLR(optimizer, 1.0, 0.0, total_iters=args.iterations)
    obs, _ = envs.reset(seed=0)
    for it in range(args.iterations):
        obs, buf = collect(envs, agent, obs, args.steps, device)
        update(agent, optimizer, buf)
        scheduler.step()
        if it % 20 == 0:
            print(f"iteration {it}: greedy return {evaluate(agent, args.env, device):.1f}")


if __name__ == "__main__":
    main()

"""TL301 probe: REINFORCE keeps per-episode log-probs on purpose (a list created inside the episode), while
episode losses and GAN losses are stored in lists that outlive the loop; `extend` of model outputs too."""
import torch
import torch.nn.functional as F


def reinforce(policy, env, optimizer, episodes, gamma=0.99):
    episode_losses = []
    for episode in range(episodes):
        obs, _ = env.reset()
        log_probs, rewards, done = [], [], False
        while not done:
            dist = policy(torch.as_tensor(obs, dtype=torch.float32))
            action = dist.sample()
            log_probs.append(dist.log_prob(action))  # clean
            obs, reward, terminated, truncated, _ = env.step(int(action))
            rewards.append(reward)
            done = terminated or truncated
        returns, g = [], 0.0
        for r in reversed(rewards):
            g = r + gamma * g
            returns.insert(0, g)
        loss = -(torch.stack(log_probs) * torch.as_tensor(returns)).sum()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        episode_losses.append(loss)  # expect: TL301
    return episode_losses


def train_gan(gen, disc, loader, z_dim=100, lr=2e-4):
    opt_g = torch.optim.Adam(gen.parameters(), lr=lr, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(disc.parameters(), lr=lr, betas=(0.5, 0.999))
    g_history, d_history, samples = [], [], []
    for real in loader:
        fake = gen(torch.randn(real.size(0), z_dim, device=real.device))
        d_loss = F.softplus(disc(fake.detach())).mean() + F.softplus(-disc(real)).mean()
        opt_d.zero_grad(set_to_none=True)
        d_loss.backward()
        opt_d.step()
        g_loss = F.softplus(-disc(fake)).mean()
        opt_g.zero_grad(set_to_none=True)
        g_loss.backward()
        opt_g.step()
        d_history.append(d_loss.detach())  # clean
        g_history.append(g_loss)  # expect: TL301
        samples.extend(fake[:4])  # expect: TL301
    return g_history, d_history, samples

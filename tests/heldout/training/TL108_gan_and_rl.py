"""TL108 probe: a warm-up scheduler stepped first thing in the step, next to non-scheduler `.step()` calls
(`env.step`, a second optimizer's scheduler after its own optimizer) that must not count."""
import torch
import torch.nn.functional as F


def train_gan(gen, disc, loader, epochs, z_dim=128):
    opt_g = torch.optim.Adam(gen.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(disc.parameters(), lr=2e-4, betas=(0.5, 0.999))
    warmup_g = torch.optim.lr_scheduler.LinearLR(opt_g, start_factor=0.01, total_iters=1000)
    decay_d = torch.optim.lr_scheduler.ExponentialLR(opt_d, gamma=0.9999)
    for epoch in range(epochs):
        for real in loader:
            warmup_g.step()  # expect: TL108
            fake = gen(torch.randn(real.size(0), z_dim, device=real.device))
            d_loss = F.softplus(disc(fake.detach())).mean() + F.softplus(-disc(real)).mean()
            opt_d.zero_grad(set_to_none=True)
            d_loss.backward()
            opt_d.step()
            decay_d.step()  # clean
            g_loss = F.softplus(-disc(fake)).mean()
            opt_g.zero_grad(set_to_none=True)
            g_loss.backward()
            opt_g.step()


def actor_critic(env, actor, critic, optimizer, steps, gamma=0.99):
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1 - s / steps)
    obs, _ = env.reset()
    for _ in range(steps):
        obs_t = torch.as_tensor(obs, dtype=torch.float32)
        dist = actor(obs_t)
        action = dist.sample()
        next_obs, reward, terminated, truncated, _ = env.step(int(action))  # clean
        with torch.no_grad():
            target = reward + gamma * critic(torch.as_tensor(next_obs, dtype=torch.float32)) * (not terminated)
        value = critic(obs_t)
        advantage = (target - value).detach()
        loss = -(dist.log_prob(action) * advantage) + F.smooth_l1_loss(value, target)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        scheduler.step()  # clean
        obs = next_obs if not (terminated or truncated) else env.reset()[0]


def actor_critic_broken(env, actor, critic, optimizer, steps, gamma=0.99):
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1 - s / steps)
    obs, _ = env.reset()
    for _ in range(steps):
        scheduler.step()  # expect: TL108
        obs_t = torch.as_tensor(obs, dtype=torch.float32)
        dist = actor(obs_t)
        action = dist.sample()
        next_obs, reward, terminated, truncated, _ = env.step(int(action))
        value = critic(obs_t)
        with torch.no_grad():
            target = reward + gamma * critic(torch.as_tensor(next_obs, dtype=torch.float32)) * (not terminated)
        loss = -(dist.log_prob(action) * (target - value).detach()) + F.smooth_l1_loss(value, target)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        obs = next_obs if not (terminated or truncated) else env.reset()[0]

"""TL301 probe: a GAN loop that keeps both networks' losses in lists for plotting, a distillation loop
summing the KD term into a running total, a gradient-accumulation loop whose per-epoch total adds the
scaled loss, and an actor-critic loop collecting value predictions across episodes; near misses store
`.item()` / `.detach()` copies, keep an episode's log-probs in a list made inside the episode and
backpropagate through their sum, and track the best loss as a float for early stopping."""
import torch
from torch import nn
import torch.nn.functional as F


def train_gan(netG: nn.Module, netD: nn.Module, loader, optimizerG, optimizerD, z_dim=100):
    G_losses, D_losses, D_x = [], [], []
    for real, _ in loader:
        optimizerD.zero_grad(set_to_none=True)
        out_real = netD(real).view(-1)
        fake = netG(torch.randn(real.size(0), z_dim, 1, 1, device=real.device))
        out_fake = netD(fake.detach()).view(-1)
        errD = F.binary_cross_entropy_with_logits(out_real, torch.ones_like(out_real)) + \
            F.binary_cross_entropy_with_logits(out_fake, torch.zeros_like(out_fake))
        errD.backward()
        optimizerD.step()

        optimizerG.zero_grad(set_to_none=True)
        out = netD(fake).view(-1)
        errG = F.binary_cross_entropy_with_logits(out, torch.ones_like(out))
        errG.backward()
        optimizerG.step()

        G_losses.append(errG)  # expect: TL301
        D_losses.append(errD.detach())  # clean
        D_x.append(out_real.mean())  # expect: TL301
    return G_losses, D_losses, D_x


def distill_epoch(student, teacher, loader, optimizer, tau=2.0):
    kd_total, ce_total = 0.0, 0.0
    teacher.eval()
    student.train()
    for x, y in loader:
        with torch.no_grad():
            t_logits = teacher(x)
        s_logits = student(x)
        kd = F.kl_div(F.log_softmax(s_logits / tau, dim=-1), F.log_softmax(t_logits / tau, dim=-1),
                      reduction="batchmean", log_target=True)
        ce = F.cross_entropy(s_logits, y)
        optimizer.zero_grad(set_to_none=True)
        (kd + ce).backward()
        optimizer.step()
        kd_total += kd  # expect: TL301
        ce_total += ce.item()  # clean
    return kd_total, ce_total


def accumulate_epoch(model, loader, optimizer, accum=4):
    epoch_loss = 0.0
    model.train()
    for i, (x, y) in enumerate(loader):
        loss = F.smooth_l1_loss(model(x), y) / accum
        loss.backward()
        epoch_loss = epoch_loss + loss  # expect: TL301
        if (i + 1) % accum == 0:
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
    return epoch_loss


def actor_critic(env, policy_net, value_net, optimizer, episodes=200, gamma=0.99):
    value_trace = []
    for episode in range(episodes):
        obs, _ = env.reset()
        log_probs, rewards, values, done = [], [], [], False
        while not done:
            state = torch.as_tensor(obs, dtype=torch.float32)
            dist = policy_net(state)
            action = dist.sample()
            log_probs.append(dist.log_prob(action))  # clean
            values.append(value_net(state))  # clean
            obs, reward, terminated, truncated, _ = env.step(action.numpy())
            rewards.append(reward)
            done = terminated or truncated
        returns, g = [], 0.0
        for r in reversed(rewards):
            g = r + gamma * g
            returns.insert(0, g)
        returns = torch.tensor(returns)
        values_t = torch.cat(values)
        advantage = returns - values_t
        loss = -(torch.stack(log_probs) * advantage.detach()).sum() + advantage.pow(2).sum()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        value_trace.append(values_t)  # expect: TL301
    return value_trace


def fit_early_stopping(model, loader, optimizer, epochs=100, patience=10):
    best, bad = float("inf"), 0
    for epoch in range(epochs):
        total = torch.zeros(())
        for x, y in loader:
            optimizer.zero_grad(set_to_none=True)
            loss = F.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss.detach()  # clean
        current = float(total)
        if current < best:
            best, bad = current, 0  # clean
        else:
            bad += 1
            if bad > patience:
                break
    return best

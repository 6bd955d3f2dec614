"""TL107 probe: a few-shot evaluation helper under `@torch.no_grad()` that fine-tunes a copy of the
meta-learned model on the support set with `.backward()`, and a PPO update that sits inside the rollout's
`with torch.inference_mode():` block by an indentation slip; near misses wrap the support-set fine-tuning
in `torch.enable_grad()`, compute the PPO loss after the rollout block ends, and call `.backward()` in a
nested `def` defined (but not run) under no_grad."""
import copy

import torch
import torch.nn.functional as F


@torch.no_grad()
def few_shot_eval(meta_model, episodes, steps=10, lr=0.01):
    accs = []
    for x_s, y_s, x_q, y_q in episodes:
        learner = copy.deepcopy(meta_model)
        opt = torch.optim.SGD(learner.parameters(), lr=lr)
        for _ in range(steps):
            opt.zero_grad()
            F.cross_entropy(learner(x_s), y_s).backward()  # expect: TL107
            opt.step()
        accs.append(learner(x_q).argmax(-1).eq(y_q).float().mean())
    return torch.stack(accs).mean()


@torch.no_grad()
def few_shot_eval_enabled(meta_model, episodes, steps=10, lr=0.01):
    accs = []
    for x_s, y_s, x_q, y_q in episodes:
        learner = copy.deepcopy(meta_model)
        opt = torch.optim.SGD(learner.parameters(), lr=lr)
        with torch.enable_grad():
            for _ in range(steps):
                opt.zero_grad()
                F.cross_entropy(learner(x_s), y_s).backward()  # clean
                opt.step()
        accs.append(learner(x_q).argmax(-1).eq(y_q).float().mean())
    return torch.stack(accs).mean()


def ppo_iteration(policy, value_fn, env, optimizer, horizon=2048, clip=0.2):
    obs = env.reset()
    with torch.inference_mode():
        states, actions, old_logps, returns = [], [], [], []
        for _ in range(horizon):
            dist = policy(obs)
            action = dist.sample()
            states.append(obs)
            actions.append(action)
            old_logps.append(dist.log_prob(action))
            obs, reward, done, _ = env.step(action)
            returns.append(reward)
        states, actions, old_logp = torch.stack(states), torch.stack(actions), torch.stack(old_logps)
        ret = torch.tensor(returns)
        adv = ret - value_fn(states).squeeze(-1)
        ratio = (policy(states).log_prob(actions) - old_logp).exp()
        loss = -torch.min(ratio * adv, ratio.clamp(1 - clip, 1 + clip) * adv).mean()
        optimizer.zero_grad()
        loss.backward()  # expect: TL107


def ppo_update_outside(policy, states, actions, old_logp, adv, optimizer, clip=0.2):
    with torch.no_grad():
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    ratio = (policy(states).log_prob(actions) - old_logp).exp()
    loss = -torch.min(ratio * adv, ratio.clamp(1 - clip, 1 + clip) * adv).mean()
    optimizer.zero_grad()
    loss.backward()  # clean
    optimizer.step()


def make_closure(model, x, y, opt):
    with torch.no_grad():
        scale = y.abs().max()

        def closure():
            opt.zero_grad()
            loss = F.mse_loss(model(x) * scale, y)
            loss.backward()  # clean
            return loss
    return closure

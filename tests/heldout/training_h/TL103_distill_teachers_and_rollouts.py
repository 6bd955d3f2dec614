"""TL103 probe: a distillation teacher run under `no_grad` inside the student's training loop without
ever being put in eval mode, an RL rollout collector under `inference_mode` that samples from the policy
without `.eval()`, a `predict_*` helper for test-time augmentation, and an EMA copy scored in a
`validate` function; near misses call `teacher.eval()` once before the loop, build the teacher with
`.eval()` chained, and a rollout that deliberately keeps dropout for exploration but is also the
training forward (it runs with grad and calls backward)."""
import torch
import torch.nn.functional as F


def distill(student, teacher, loader, optimizer, T=4.0):
    student.train()
    for x, y in loader:
        with torch.no_grad():
            t_logits = teacher(x)  # expect: TL103
        s_logits = student(x)
        kd = F.kl_div(F.log_softmax(s_logits / T, dim=-1), F.softmax(t_logits / T, dim=-1), reduction="batchmean")
        loss = kd * T * T + F.cross_entropy(s_logits, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()


def distill_frozen_teacher(student, teacher, loader, optimizer, T=4.0):
    teacher.eval()
    student.train()
    for x, y in loader:
        with torch.no_grad():
            t_logits = teacher(x)  # clean
        s_logits = student(x)
        kd = F.kl_div(F.log_softmax(s_logits / T, dim=-1), F.softmax(t_logits / T, dim=-1), reduction="batchmean")
        loss = kd * T * T + F.cross_entropy(s_logits, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()


@torch.inference_mode()
def collect_rollout(policy, env, horizon=256):
    obs = env.reset()
    trajectory = []
    for _ in range(horizon):
        dist = torch.distributions.Categorical(logits=policy(torch.as_tensor(obs)))  # expect: TL103
        action = dist.sample()
        obs, reward, done, _ = env.step(int(action))
        trajectory.append((obs, int(action), reward, done))
        if done:
            obs = env.reset()
    return trajectory


@torch.inference_mode()
def collect_rollout_eval(policy, env, horizon=256):
    policy.eval()
    obs = env.reset()
    trajectory = []
    for _ in range(horizon):
        dist = torch.distributions.Categorical(logits=policy(torch.as_tensor(obs)))  # clean
        action = dist.sample()
        obs, reward, done, _ = env.step(int(action))
        trajectory.append((obs, int(action), reward, done))
        if done:
            obs = env.reset()
    return trajectory


def predict_tta(model, images):
    with torch.no_grad():
        views = [images, images.flip(-1), images.flip(-2)]
        return torch.stack([model(v).softmax(-1) for v in views]).mean(0)  # expect: TL103


def validate_ema(ema_model, loader):
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            correct += int((ema_model(x).argmax(-1) == y).sum())  # expect: TL103
    return correct / len(loader.dataset)


def validate_ema_eval(ema_model, loader):
    ema_model.eval()
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            correct += int((ema_model(x).argmax(-1) == y).sum())  # clean
    return correct / len(loader.dataset)


def reinforce_episode(policy, env, optimizer, gamma=0.99):
    obs, done, log_probs, rewards = env.reset(), False, [], []
    while not done:
        dist = torch.distributions.Categorical(logits=policy(torch.as_tensor(obs)))  # clean
        action = dist.sample()
        log_probs.append(dist.log_prob(action))
        obs, reward, done, _ = env.step(int(action))
        rewards.append(reward)
    returns, g = [], 0.0
    for r in reversed(rewards):
        g = r + gamma * g
        returns.insert(0, g)
    loss = -(torch.stack(log_probs) * torch.tensor(returns)).sum()
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()

"""TL301/TL302 probe: an SWA/EMA training script whose epoch-end scoring of the averaged model
runs with grad on after `.eval()`, a rollout buffer filled with value estimates that carry the graph
while the same loop trains the critic, and a `predict` helper over test images; near misses score
the averaged model under `no_grad`, detach value estimates before storing them, and a `predict`
that is decorated with `@torch.inference_mode()`."""
import torch
import torch.nn.functional as F


def score_averaged(swa_model, loader):
    swa_model.eval()
    correct = 0
    for x, y in loader:
        correct += int((swa_model(x).argmax(-1) == y).sum())  # expect: TL302
    return correct / len(loader.dataset)


@torch.no_grad()
def score_averaged_no_grad(swa_model, loader):
    swa_model.eval()
    correct = 0
    for x, y in loader:
        correct += int((swa_model(x).argmax(-1) == y).sum())  # clean
    return correct / len(loader.dataset)


def a2c_rollouts(actor, critic, env, actor_opt, critic_opt, steps=1000, gamma=0.99):
    obs = env.reset()
    values, rewards = [], []
    for t in range(steps):
        obs_t = torch.as_tensor(obs)
        value = critic(obs_t)
        dist = torch.distributions.Categorical(logits=actor(obs_t))
        action = dist.sample()
        obs, reward, done, _ = env.step(int(action))
        with torch.no_grad():
            target = reward + gamma * critic(torch.as_tensor(obs)) * (1 - float(done))
        critic_loss = F.mse_loss(value, target)
        actor_loss = -dist.log_prob(action) * (target - value).detach()
        critic_opt.zero_grad(set_to_none=True)
        actor_opt.zero_grad(set_to_none=True)
        (critic_loss + actor_loss.sum()).backward()
        critic_opt.step()
        actor_opt.step()
        values.append(value)  # expect: TL301
        rewards.append(reward)  # clean
        if done:
            obs = env.reset()
    return values, rewards


def a2c_rollouts_detached(actor, critic, env, actor_opt, critic_opt, steps=1000, gamma=0.99):
    obs = env.reset()
    values = []
    for t in range(steps):
        obs_t = torch.as_tensor(obs)
        value = critic(obs_t)
        dist = torch.distributions.Categorical(logits=actor(obs_t))
        action = dist.sample()
        obs, reward, done, _ = env.step(int(action))
        with torch.no_grad():
            target = reward + gamma * critic(torch.as_tensor(obs)) * (1 - float(done))
        loss = F.mse_loss(value, target) - (dist.log_prob(action) * (target - value).detach()).sum()
        critic_opt.zero_grad(set_to_none=True)
        actor_opt.zero_grad(set_to_none=True)
        loss.backward()
        critic_opt.step()
        actor_opt.step()
        values.append(value.detach())  # clean
        if done:
            obs = env.reset()
    return values


def predict(model, images):
    model.eval()
    return model(images).softmax(-1)  # expect: TL302


@torch.inference_mode()
def predict_inference(model, images):
    model.eval()
    return model(images).softmax(-1)  # clean

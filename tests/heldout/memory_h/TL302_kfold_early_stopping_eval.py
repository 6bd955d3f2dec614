"""TL302 probe: evaluation run with grad on in settings with unusual loops: an early-stopping check
named `validate_fold` in a k-fold loop, out-of-fold predictions after `model.eval()` in a notebook cell,
a distillation script's teacher-accuracy report, and an RL `evaluate_policy` episode loop; near misses
run under `torch.no_grad()` / `inference_mode`, compute saliency maps (which need grad) in an
`explain` helper after `.eval()`, and a `test_time_adapt` that trains (calls `backward`)."""
import torch
import torch.nn.functional as F
from torch import nn


def validate_fold(model, val_loader):
    model.eval()
    total, n = 0.0, 0
    for x, y in val_loader:
        total += float(F.cross_entropy(model(x), y, reduction="sum"))  # expect: TL302
        n += len(y)
    return total / n


def validate_fold_no_grad(model, val_loader):
    model.eval()
    total, n = 0.0, 0
    with torch.no_grad():
        for x, y in val_loader:
            total += float(F.cross_entropy(model(x), y, reduction="sum"))  # clean
            n += len(y)
    return total / n


def teacher_accuracy(teacher, loader):
    teacher.eval()
    hits = 0
    for x, y in loader:
        hits += int((teacher(x).argmax(-1) == y).sum())  # expect: TL302
    return hits / len(loader.dataset)


def evaluate_policy(policy, env, episodes=5):
    policy.eval()
    returns = []
    for _ in range(episodes):
        obs, done, ret = env.reset(), False, 0.0
        while not done:
            action = int(policy(torch.as_tensor(obs).unsqueeze(0)).argmax(-1))  # expect: TL302
            obs, reward, done, _ = env.step(action)
            ret += reward
        returns.append(ret)
    return sum(returns) / len(returns)


@torch.inference_mode()
def evaluate_policy_inference(policy, env, episodes=5):
    policy.eval()
    returns = []
    for _ in range(episodes):
        obs, done, ret = env.reset(), False, 0.0
        while not done:
            action = int(policy(torch.as_tensor(obs).unsqueeze(0)).argmax(-1))  # clean
            obs, reward, done, _ = env.step(action)
            ret += reward
        returns.append(ret)
    return sum(returns) / len(returns)


def explain(model, images, targets):
    model.eval()
    images = images.clone().requires_grad_(True)
    scores = model(images).gather(1, targets[:, None]).sum()  # clean
    (saliency,) = torch.autograd.grad(scores, images)
    return saliency.abs().amax(1)


def test_time_adapt(model, batch, steps=1, lr=1e-4):
    model.eval()
    params = [p for n, p in model.named_parameters() if "norm" in n]
    optimizer = torch.optim.SGD(params, lr=lr)
    for _ in range(steps):
        probs = model(batch).softmax(-1)  # clean
        entropy = -(probs * probs.clamp_min(1e-8).log()).sum(-1).mean()
        optimizer.zero_grad(set_to_none=True)
        entropy.backward()
        optimizer.step()
    with torch.no_grad():
        return model(batch)


mlp = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 1))
folds = [(torch.randn(40, 12), torch.arange(40)) for _ in range(5)]
oof = torch.zeros(200)
mlp.eval()
for k, (val_x, val_idx) in enumerate(folds):
    oof[val_idx + 40 * k] = torch.sigmoid(mlp(val_x)).squeeze(-1).detach()  # expect: TL302

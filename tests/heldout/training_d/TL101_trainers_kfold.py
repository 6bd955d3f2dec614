"""TL101 probe: a k-fold loop that builds a fresh model and optimizer per fold and trains it with no
clearing, an actor-critic update stepping one optimizer on the sum of both losses, and a trainer class
stepping `self.opt` through an AMP GradScaler; near misses clear through `self.model.zero_grad()`, set
`p.grad = None` over the parameters, or clear with `set_to_none` inside a `while` early-stopping loop."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Subset


def make_regressor(n_features):
    return nn.Sequential(nn.Linear(n_features, 256), nn.GELU(), nn.Dropout(0.1), nn.Linear(256, 1))


def cross_validate(dataset, folds, n_features, epochs=30):
    scores = []
    for fold, (train_idx, val_idx) in enumerate(folds):
        model = make_regressor(n_features)
        opt = torch.optim.AdamW(model.parameters(), lr=2e-3)
        loader = DataLoader(Subset(dataset, train_idx), batch_size=128, shuffle=True, num_workers=4,
                            pin_memory=True)
        model.train()
        for epoch in range(epochs):
            for x, y in loader:  # expect: TL101
                loss = F.mse_loss(model(x).squeeze(-1), y)
                loss.backward()
                opt.step()
        scores.append(fold)
    return scores


def a2c_update(actor_critic, optimizer, rollouts, value_coef=0.5, entropy_coef=0.01):
    for obs, actions, returns in rollouts:  # expect: TL101
        dist, values = actor_critic(obs)
        advantages = returns - values.squeeze(-1)
        policy_loss = -(dist.log_prob(actions) * advantages.detach()).mean()
        value_loss = advantages.pow(2).mean()
        loss = policy_loss + value_coef * value_loss - entropy_coef * dist.entropy().mean()
        loss.backward()
        nn.utils.clip_grad_norm_(actor_critic.parameters(), 0.5)
        optimizer.step()


def a2c_update_fixed(actor_critic, optimizer, rollouts, value_coef=0.5):
    for obs, actions, returns in rollouts:  # clean
        for p in actor_critic.parameters():
            p.grad = None
        dist, values = actor_critic(obs)
        advantages = returns - values.squeeze(-1)
        loss = -(dist.log_prob(actions) * advantages.detach()).mean() + value_coef * advantages.pow(2).mean()
        loss.backward()
        optimizer.step()


class SegTrainer:
    def __init__(self, model, loader, lr=1e-3):
        self.model = model
        self.loader = loader
        self.opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True)
        self.scaler = torch.amp.GradScaler("cuda")

    def run_epoch(self):
        self.model.train()
        for images, masks in self.loader:  # expect: TL101
            with torch.autocast("cuda", dtype=torch.float16):
                loss = F.cross_entropy(self.model(images), masks, ignore_index=255)
            self.scaler.scale(loss).backward()
            self.scaler.step(self.opt)
            self.scaler.update()

    def run_epoch_fixed(self):
        self.model.train()
        for images, masks in self.loader:  # clean
            self.model.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.float16):
                loss = F.cross_entropy(self.model(images), masks, ignore_index=255)
            self.scaler.scale(loss).backward()
            self.scaler.step(self.opt)
            self.scaler.update()


def fit_until_plateau(model, batches, optimizer, patience=5):
    best, bad, step = float("inf"), 0, 0
    while bad < patience:  # clean
        x, y = batches[step % len(batches)]
        optimizer.zero_grad(set_to_none=True)
        loss = F.l1_loss(model(x), y)
        loss.backward()
        optimizer.step()
        step += 1
        if step % len(batches) == 0:
            current = float(loss)
            bad = 0 if current < best else bad + 1
            best = min(best, current)
    return model

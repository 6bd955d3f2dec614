"""TL301 probe: a CLIP-style contrastive loop that keeps every step's logit matrix for a retrieval metric
at the end of the epoch, a PPO learner that records the clipped policy loss and the value loss of every
minibatch in a dict of lists, and a LoRA trainer class summing `self.running_loss += loss`; near misses
gather embeddings for the in-batch negatives inside the step (a list made per step), store
`logits.detach()`, log `loss.item()` only every 50 steps, and sum losses of the tasks of one outer step
before backpropagating through the sum (the accumulator is made inside the iteration)."""
from collections import defaultdict

import torch
import torch.distributed as dist
import torch.nn.functional as F


def clip_epoch(image_enc, text_enc, loader, optimizer, logit_scale):
    all_logits, all_logits_detached = [], []
    for images, tokens in loader:
        img = F.normalize(image_enc(images), dim=-1)
        txt = F.normalize(text_enc(tokens), dim=-1)
        gathered_img = [torch.zeros_like(img) for _ in range(dist.get_world_size())]
        dist.all_gather(gathered_img, img)
        gathered_img[dist.get_rank()] = img  # clean
        logits = logit_scale.exp() * torch.cat(gathered_img) @ txt.T
        labels = torch.arange(txt.shape[0], device=txt.device) + dist.get_rank() * txt.shape[0]
        loss = F.cross_entropy(logits.T, labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        all_logits.append(logits)  # expect: TL301
        all_logits_detached.append(logits.detach())  # clean
    return all_logits, all_logits_detached


def ppo_learn(policy, value_net, optimizer, minibatches, epochs=4, clip=0.2):
    stats = defaultdict(list)
    for epoch in range(epochs):
        for step, (obs, act, old_logp, adv, ret) in enumerate(minibatches):
            logp = policy(obs).log_prob(act)
            ratio = (logp - old_logp).exp()
            pg_loss = -torch.min(ratio * adv, ratio.clamp(1 - clip, 1 + clip) * adv).mean()
            v_loss = F.mse_loss(value_net(obs).squeeze(-1), ret)
            optimizer.zero_grad(set_to_none=True)
            (pg_loss + 0.5 * v_loss).backward()
            optimizer.step()
            stats["pg_loss"].append(pg_loss)  # expect: TL301
            stats["v_loss"].append(v_loss)  # expect: TL301
            if step % 50 == 0:
                stats["logged"].append(pg_loss.item())  # clean
    return stats


class LoRATrainer:
    def __init__(self, model, optimizer, loader):
        self.model = model
        self.optimizer = optimizer
        self.loader = loader
        self.running_loss = 0.0
        self.history = []

    def train_epoch(self):
        for batch in self.loader:
            loss = self.model(**batch).loss
            loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad(set_to_none=True)
            self.running_loss += loss  # expect: TL301
            self.history.append(loss.detach().float())  # clean
        return self.running_loss


def meta_step(model, task_batches, meta_opt, outer_steps=100):
    for _ in range(outer_steps):
        task_losses = []
        meta_loss = 0.0
        for x, y in task_batches():
            task_loss = F.cross_entropy(model(x), y)
            task_losses.append(task_loss)  # clean
            meta_loss = meta_loss + task_loss  # clean
        meta_opt.zero_grad(set_to_none=True)
        (meta_loss / len(task_losses)).backward()
        meta_opt.step()

"""TL101 probe: a MAML outer loop whose meta-optimizer never clears the meta-gradients the task loop
backpropagates into, a CLIP step over two encoders sharing one optimizer with no clearing, a
curriculum loop over several loaders where the inner loop steps without clearing, and a
notebook-style top-level multi-task loop; near misses clear the meta-optimizer once per meta-batch
(the per-task backward accumulating on purpose), clear both encoders with `zero_grad` on the
module holding them, clear after the step at the end of the body, and adapt with
`torch.autograd.grad` (no `.backward()`, no step) in the inner loop."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call


def inner_adapt(model, params, x, y, inner_lr=0.4, steps=1):
    for _ in range(steps):  # clean
        loss = F.cross_entropy(functional_call(model, params, (x,)), y)
        grads = torch.autograd.grad(loss, list(params.values()), create_graph=True)
        params = {name: p - inner_lr * g for (name, p), g in zip(params.items(), grads)}
    return params


def maml_without_clearing(model, meta_opt, task_batches):
    for tasks in task_batches:  # expect: TL101
        for x_s, y_s, x_q, y_q in tasks:
            fast = inner_adapt(model, dict(model.named_parameters()), x_s, y_s)
            query_loss = F.cross_entropy(functional_call(model, fast, (x_q,)), y_q) / len(tasks)
            query_loss.backward()
        meta_opt.step()


def maml_clearing_each_meta_batch(model, meta_opt, task_batches):
    for tasks in task_batches:  # clean
        meta_opt.zero_grad(set_to_none=True)
        for x_s, y_s, x_q, y_q in tasks:
            fast = inner_adapt(model, dict(model.named_parameters()), x_s, y_s)
            query_loss = F.cross_entropy(functional_call(model, fast, (x_q,)), y_q) / len(tasks)
            query_loss.backward()
        meta_opt.step()


class CLIP(nn.Module):
    def __init__(self, image_encoder, text_encoder):
        super().__init__()
        self.image_encoder = image_encoder
        self.text_encoder = text_encoder
        self.logit_scale = nn.Parameter(torch.tensor(2.659))


def clip_loss(clip, images, tokens):
    img = F.normalize(clip.image_encoder(images), dim=-1)
    txt = F.normalize(clip.text_encoder(tokens), dim=-1)
    logits = clip.logit_scale.exp() * img @ txt.t()
    labels = torch.arange(images.size(0), device=images.device)
    return (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2


def clip_train_no_clearing(clip, optimizer, loader):
    for images, tokens in loader:  # expect: TL101
        loss = clip_loss(clip, images, tokens)
        loss.backward()
        optimizer.step()


def clip_train_module_clearing(clip, optimizer, loader):
    for images, tokens in loader:  # clean
        clip.zero_grad(set_to_none=True)
        loss = clip_loss(clip, images, tokens)
        loss.backward()
        optimizer.step()


def curriculum(model, optimizer, loaders_by_difficulty, epochs_per_stage=2):
    for stage, loader in enumerate(loaders_by_difficulty):
        for epoch in range(epochs_per_stage):
            for x, y in loader:  # expect: TL101
                F.cross_entropy(model(x), y).backward()
                optimizer.step()


def curriculum_clearing_after_step(model, optimizer, loaders_by_difficulty, epochs_per_stage=2):
    for stage, loader in enumerate(loaders_by_difficulty):
        for epoch in range(epochs_per_stage):
            for x, y in loader:  # clean
                F.cross_entropy(model(x), y).backward()
                optimizer.step()
                optimizer.zero_grad()


# %% notebook: one trunk, two heads, two losses
trunk = nn.Sequential(nn.Linear(32, 64), nn.ReLU())
cls_head, reg_head = nn.Linear(64, 5), nn.Linear(64, 1)
params = [*trunk.parameters(), *cls_head.parameters(), *reg_head.parameters()]
opt = torch.optim.AdamW(params, lr=3e-4)
batches = [(torch.randn(16, 32), torch.randint(0, 5, (16,)), torch.randn(16, 1)) for _ in range(8)]

# %% train
for epoch in range(3):
    for xb, cls_y, reg_y in batches:  # expect: TL101
        h = trunk(xb)
        loss = F.cross_entropy(cls_head(h), cls_y) + 0.5 * F.mse_loss(reg_head(h), reg_y)
        loss.backward()
        opt.step()

# %% train again, clearing
for epoch in range(3):
    for xb, cls_y, reg_y in batches:  # clean
        opt.zero_grad(set_to_none=True)
        h = trunk(xb)
        loss = F.cross_entropy(cls_head(h), cls_y) + 0.5 * F.mse_loss(reg_head(h), reg_y)
        loss.backward()
        opt.step()

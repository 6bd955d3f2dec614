"""TL104 probe: in-place changes of tensors that require grad outside `no_grad`: merging a
hand-written LoRA update into the frozen-by-convention base weight (still an `nn.Parameter` with
grad on), a first-order MAML outer update written as `p -= lr * p.grad` over `model.parameters()`,
ActNorm's data-dependent initialisation in a normalizing flow copying into its parameters, CLIP's
`logit_scale` clamped in the training loop, and a notebook-style linear fit updating its leaf
weights by hand; near misses do the same under `torch.no_grad()`, through `.data`, with
`nn.init.zeros_`, and build the fast weights of the inner loop out of place."""
import math

import torch
import torch.nn.functional as F
from torch import nn


class LoRALinear(nn.Module):
    def __init__(self, in_features, out_features, rank=8, alpha=16):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        self.bias = nn.Parameter(torch.zeros(out_features))
        self.lora_A = nn.Parameter(torch.randn(rank, in_features) / rank)
        self.lora_B = nn.Parameter(torch.zeros(out_features, rank))
        self.scale = alpha / rank
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))  # clean

    def forward(self, x):
        return F.linear(x, self.weight, self.bias) + (x @ self.lora_A.t() @ self.lora_B.t()) * self.scale


def merge_lora(layer: LoRALinear):
    layer.weight += (layer.lora_B @ layer.lora_A) * layer.scale  # expect: TL104
    nn.init.zeros_(layer.lora_B)  # clean


def merge_lora_no_grad(layer: LoRALinear):
    with torch.no_grad():
        layer.weight += (layer.lora_B @ layer.lora_A) * layer.scale  # clean
        layer.lora_B.zero_()  # clean


def first_order_maml_outer(model, meta_lr, tasks, adapt):
    for x_q, y_q, support in tasks:
        fast = adapt(model, support)
        F.cross_entropy(fast(x_q), y_q).backward()
    for p in model.parameters():
        p -= meta_lr * p.grad  # expect: TL104
        p.grad = None


def first_order_maml_outer_no_grad(model, meta_lr, tasks, adapt):
    for x_q, y_q, support in tasks:
        fast = adapt(model, support)
        F.cross_entropy(fast(x_q), y_q).backward()
    with torch.no_grad():
        for p in model.parameters():
            p -= meta_lr * p.grad  # clean
            p.grad = None


def inner_fast_weights(weights, x, y, lr=0.01):
    loss = F.mse_loss(x @ weights[0] + weights[1], y)
    grads = torch.autograd.grad(loss, weights, create_graph=True)
    return [w - lr * g for w, g in zip(weights, grads)]  # clean


class ActNorm(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.loc = nn.Parameter(torch.zeros(1, channels, 1, 1))
        self.log_scale = nn.Parameter(torch.zeros(1, channels, 1, 1))
        self.register_buffer("initialized", torch.tensor(False))

    def forward(self, x):
        if not self.initialized:
            mean = x.mean(dim=(0, 2, 3), keepdim=True)
            std = x.std(dim=(0, 2, 3), keepdim=True)
            self.loc.copy_(-mean)  # expect: TL104
            self.log_scale.copy_(-torch.log(std + 1e-6))  # expect: TL104
            self.initialized.fill_(True)  # clean
        y = (x + self.loc) * self.log_scale.exp()
        logdet = self.log_scale.sum() * x.size(2) * x.size(3)
        return y, logdet


class ActNormData(ActNorm):
    def forward(self, x):
        if not self.initialized:
            mean = x.mean(dim=(0, 2, 3), keepdim=True)
            std = x.std(dim=(0, 2, 3), keepdim=True)
            self.loc.data.copy_(-mean)  # clean
            self.log_scale.data.copy_(-torch.log(std + 1e-6))  # clean
            self.initialized.fill_(True)
        y = (x + self.loc) * self.log_scale.exp()
        return y, self.log_scale.sum() * x.size(2) * x.size(3)


class ContrastiveModel(nn.Module):
    def __init__(self, image_encoder, text_encoder):
        super().__init__()
        self.image_encoder, self.text_encoder = image_encoder, text_encoder
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07)))


def train_clip(image_encoder, text_encoder, loader, steps):
    model = ContrastiveModel(image_encoder, text_encoder)
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)
    for images, tokens in loader:
        optimizer.zero_grad(set_to_none=True)
        img = F.normalize(model.image_encoder(images), dim=-1)
        txt = F.normalize(model.text_encoder(tokens), dim=-1)
        logits = model.logit_scale.exp() * img @ txt.t()
        labels = torch.arange(len(images), device=logits.device)
        loss = (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2
        loss.backward()
        optimizer.step()
        model.logit_scale.clamp_(0, math.log(100))  # expect: TL104
    return model


def train_clip_clamp_no_grad(image_encoder, text_encoder, loader, steps):
    model = ContrastiveModel(image_encoder, text_encoder)
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)
    for images, tokens in loader:
        optimizer.zero_grad(set_to_none=True)
        img = F.normalize(model.image_encoder(images), dim=-1)
        txt = F.normalize(model.text_encoder(tokens), dim=-1)
        logits = model.logit_scale.exp() * img @ txt.t()
        labels = torch.arange(len(images), device=logits.device)
        loss = (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            model.logit_scale.clamp_(0, math.log(100))  # clean
    return model


# %% notebook: linear regression by hand
X = torch.randn(256, 3)
y = X @ torch.tensor([[1.5], [-2.0], [0.7]]) + 0.1 * torch.randn(256, 1)
w = torch.zeros(3, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
for step in range(100):
    loss = ((X @ w + b - y) ** 2).mean()
    loss.backward()
    w -= 0.1 * w.grad  # expect: TL104
    b -= 0.1 * b.grad  # expect: TL104
    w.grad = None
    b.grad = None

# %% same fit, updating under no_grad
w2 = torch.zeros(3, 1, requires_grad=True)
for step in range(100):
    loss = ((X @ w2 - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w2 -= 0.1 * w2.grad  # clean
    w2.grad = None

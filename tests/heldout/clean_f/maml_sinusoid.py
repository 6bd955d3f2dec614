"""Clean: second-order MAML on sinusoid regression with `torch.func.functional_call`: the inner loop
adapts a dict of fast weights with `torch.autograd.grad(create_graph=True)`, the outer loop averages
the query losses of a task batch and steps the meta-optimizer after clearing its gradients, and
meta-testing adapts under `torch.enable_grad()` inside an otherwise gradient-free evaluation."""
import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call


def sample_tasks(n_tasks, k_shot, generator):
    amp = torch.rand(n_tasks, 1, 1, generator=generator) * 4.9 + 0.1
    phase = torch.rand(n_tasks, 1, 1, generator=generator) * math.pi
    x = torch.rand(n_tasks, 2 * k_shot, 1, generator=generator) * 10 - 5
    y = amp * torch.sin(x + phase)
    return x[:, :k_shot], y[:, :k_shot], x[:, k_shot:], y[:, k_shot:]


def adapt(net, params, x, y, inner_lr, steps, create_graph):
    for _ in range(steps):
        loss = F.mse_loss(functional_call(net, params, (x,)), y)
        grads = torch.autograd.grad(loss, tuple(params.values()), create_graph=create_graph)
        params = {name: w - inner_lr * g for (name, w), g in zip(params.items(), grads)}
    return params


def meta_train(meta_steps=20000, n_tasks=25, k_shot=10, inner_lr=0.01, inner_steps=1):
    net = nn.Sequential(nn.Linear(1, 40), nn.ReLU(), nn.Linear(40, 40), nn.ReLU(), nn.Linear(40, 1))
    meta_opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    generator = torch.Generator().manual_seed(0)
    history = []
    for step in range(meta_steps):
        xs, ys, xq, yq = sample_tasks(n_tasks, k_shot, generator)
        meta_opt.zero_grad(set_to_none=True)
        query_losses = []
        for t in range(n_tasks):
            fast = adapt(net, dict(net.named_parameters()), xs[t], ys[t], inner_lr, inner_steps, True)
            query_losses.append(F.mse_loss(functional_call(net, fast, (xq[t],)), yq[t]))
        meta_loss = torch.stack(query_losses).mean()
        meta_loss.backward()
        meta_opt.step()
        if step % 1000 == 0:
            history.append(meta_loss.item())
    return net, history


@torch.no_grad()
def meta_test(net, n_tasks=100, k_shot=10, inner_lr=0.01, steps=10):
    net.eval()
    generator = torch.Generator().manual_seed(1)
    xs, ys, xq, yq = sample_tasks(n_tasks, k_shot, generator)
    errors = []
    for t in range(n_tasks):
        with torch.enable_grad():
            params = {n: p.detach().requires_grad_(True) for n, p in net.named_parameters()}
            fast = adapt(net, params, xs[t], ys[t], inner_lr, steps, False)
        errors.append(F.mse_loss(functional_call(net, fast, (xq[t],)), yq[t]))
    return torch.stack(errors).mean().item()

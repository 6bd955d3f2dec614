"""TL101 probe: a MAML outer loop whose meta-optimizer never clears the gradients the outer
`.backward()` leaves on the initial weights, a peft LoRA fine-tuning loop over a `while` on global
steps, and a notebook-style top-level diffusion loop with an EMA update; near misses clear with
`meta_opt.zero_grad()` at the end of the step, clear inside the accumulation branch that also steps,
set `p.grad = None` by hand, and adapt the inner loop with `torch.autograd.grad` (no `.grad` is
written, so nothing accumulates there)."""
import copy

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM


def inner_adapt(net, params, x, y, inner_lr=0.4, steps=1):
    for _ in range(steps):  # clean
        loss = F.cross_entropy(functional_call(net, params, (x,)), y)
        grads = torch.autograd.grad(loss, list(params.values()), create_graph=True)
        params = {name: w - inner_lr * g for (name, w), g in zip(params.items(), grads)}
    return params


def maml(net, task_loader, meta_steps=10000):
    meta_opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    for step, tasks in zip(range(meta_steps), task_loader):  # expect: TL101
        meta_loss = 0.0
        for x_s, y_s, x_q, y_q in tasks:
            fast = inner_adapt(net, dict(net.named_parameters()), x_s, y_s)
            meta_loss = meta_loss + F.cross_entropy(functional_call(net, fast, (x_q,)), y_q)
        (meta_loss / len(tasks)).backward()
        meta_opt.step()


def maml_cleared(net, task_loader, meta_steps=10000):
    meta_opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    for step, tasks in zip(range(meta_steps), task_loader):  # clean
        meta_loss = sum(
            F.cross_entropy(functional_call(net, inner_adapt(net, dict(net.named_parameters()), xs, ys), (xq,)), yq)
            for xs, ys, xq, yq in tasks
        )
        meta_loss.backward()
        meta_opt.step()
        meta_opt.zero_grad(set_to_none=True)


def lora_finetune(batches, max_steps=2000, accum=8):
    base = AutoModelForCausalLM.from_pretrained("gpt2")
    model = get_peft_model(base, LoraConfig(r=8, lora_alpha=16, target_modules=["c_attn"]))
    optimizer = torch.optim.AdamW((p for p in model.parameters() if p.requires_grad), lr=2e-4)
    step = 0
    while step < max_steps:  # expect: TL101
        batch = next(batches)
        out = model(**batch)
        out.loss.backward()
        optimizer.step()
        step += 1


def lora_finetune_accumulated(model, batches, max_steps=2000, accum=8):
    optimizer = torch.optim.AdamW((p for p in model.parameters() if p.requires_grad), lr=2e-4)
    for i, batch in enumerate(batches):  # clean
        (model(**batch).loss / accum).backward()
        if (i + 1) % accum == 0:
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        if i // accum >= max_steps:
            break


def manual_clear(model, loader, opt):
    for x, y in loader:  # clean
        F.mse_loss(model(x), y).backward()
        opt.step()
        for p in model.parameters():
            p.grad = None


# --- notebook cell: tiny DDPM on 2-D points -------------------------------------------------------
denoiser = nn.Sequential(nn.Linear(3, 128), nn.SiLU(), nn.Linear(128, 128), nn.SiLU(), nn.Linear(128, 2))
ema = copy.deepcopy(denoiser).requires_grad_(False)
opt = torch.optim.Adam(denoiser.parameters(), lr=3e-4)
betas = torch.linspace(1e-4, 0.02, 1000)
alpha_bar = torch.cumprod(1 - betas, dim=0)
points = torch.randn(4096, 2)

for it in range(5000):  # expect: TL101
    x0 = points[torch.randint(0, len(points), (256,))]
    t = torch.randint(0, 1000, (256,))
    noise = torch.randn_like(x0)
    a = alpha_bar[t].unsqueeze(1)
    xt = a.sqrt() * x0 + (1 - a).sqrt() * noise
    pred = denoiser(torch.cat([xt, t.unsqueeze(1) / 1000], dim=1))
    F.mse_loss(pred, noise).backward()
    opt.step()
    with torch.no_grad():
        for pe, p in zip(ema.parameters(), denoiser.parameters()):
            pe.lerp_(p, 1 - 0.999)

"""TL108 probe: HF/accelerate-style loops where the LR scheduler steps before the optimizer (inside the
accumulation `if`, and before `scaler.step(optimizer)`); near misses step it after, or only per epoch."""
import torch
import torch.nn.functional as F
from transformers import get_linear_schedule_with_warmup


def finetune(accelerator, model, optimizer, loader, epochs, accum_steps=4):
    lr_scheduler = get_linear_schedule_with_warmup(optimizer, 100, epochs * len(loader) // accum_steps)
    model.train()
    for epoch in range(epochs):
        for step, batch in enumerate(loader):
            outputs = model(**batch)
            accelerator.backward(outputs.loss / accum_steps)
            if (step + 1) % accum_steps == 0:
                lr_scheduler.step()  # expect: TL108
                optimizer.step()
                optimizer.zero_grad()


def finetune_fixed(accelerator, model, optimizer, loader, epochs, accum_steps=4):
    lr_scheduler = get_linear_schedule_with_warmup(optimizer, 100, epochs * len(loader) // accum_steps)
    model.train()
    for epoch in range(epochs):
        for step, batch in enumerate(loader):
            outputs = model(**batch)
            accelerator.backward(outputs.loss / accum_steps)
            if (step + 1) % accum_steps == 0:
                optimizer.step()
                lr_scheduler.step()  # clean
                optimizer.zero_grad()


def train_amp(model, optimizer, loader, total_steps):
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=3e-3, total_steps=total_steps)
    scaler = torch.amp.GradScaler("cuda")
    model.train()
    for x, y in loader:
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scheduler.step()  # expect: TL108
        scaler.step(optimizer)
        scaler.update()


def train_amp_fixed(model, optimizer, loader, epochs):
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.5)
    scaler = torch.amp.GradScaler("cuda")
    for epoch in range(epochs):
        model.train()
        for x, y in loader:
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.float16):
                loss = F.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        scheduler.step()  # clean

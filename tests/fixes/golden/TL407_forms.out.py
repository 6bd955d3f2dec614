import torch
import torch.nn.functional as F


def adapt(model, x, y, steps=5, lr=0.01):
    for _ in range(steps):
        F.mse_loss(model(x), y).backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= lr * p.grad
                p.grad = None  # reset
    return model


def meta_train(model, tasks, meta_lr=1e-3):
    meta_opt = torch.optim.Adam(model.parameters(), lr=meta_lr)
    for x, y in tasks:
        meta_opt.zero_grad(set_to_none=True)
        F.mse_loss(model(x), y).backward()
        meta_opt.step()
    return model


def finetune(model, loader, opt):
    for x, y in loader:
        opt.zero_grad(True)  # positional set_to_none
        F.mse_loss(model(x), y).backward()
        opt.step()

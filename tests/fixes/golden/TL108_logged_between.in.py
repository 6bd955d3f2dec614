import torch
import torch.nn.functional as F


def fit(model, loader, steps, log):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=steps)
    for x, y in loader:
        optimizer.zero_grad()
        F.mse_loss(model(x), y).backward()
        scheduler.step()
        log(scheduler.get_last_lr())
        optimizer.step()

"""TL402 probe: an EMA trainer that moves its EMA copy and its loss to the device on every step,
against moves that run once: on the last epoch only, in a branch that stops training early,
and a swap of the active model chosen per epoch."""
import copy

import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def train_with_ema(model, loader, epochs, decay=0.999, patience=3):
    ema = copy.deepcopy(model).eval()
    criterion = nn.SmoothL1Loss()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    model.to(device)
    best, bad_epochs = float("inf"), 0
    for epoch in range(epochs):
        model.train()
        total = torch.zeros((), device=device)
        for x, y in loader:
            ema.to(device)  # expect: TL402
            criterion.to(device)  # expect: TL402
            x, y = x.to(device), y.to(device)
            loss = criterion(model(x), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            with torch.no_grad():
                for pe, pm in zip(ema.parameters(), model.parameters()):
                    pe.lerp_(pm, 1 - decay)
            total += loss.detach()
        epoch_loss = float(total) / max(len(loader), 1)
        if epoch_loss < best:
            best, bad_epochs = epoch_loss, 0
        else:
            bad_epochs += 1
        if bad_epochs > patience:
            ema.cpu()  # clean
            break
        if epoch == epochs - 1:
            model.cpu()  # clean
    return model, ema

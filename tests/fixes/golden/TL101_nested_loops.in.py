import torch
import torch.nn.functional as F


def fit(model, loader, epochs, scaler):
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for epoch in range(epochs):
        for step, (x, y) in enumerate(loader):  # the step loop
            with torch.autocast("cuda"):
                loss = F.mse_loss(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        print(f"epoch {epoch} done")

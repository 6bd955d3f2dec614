import torch
import torch.nn.functional as F


def fit(model, loader, epochs):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    warmup = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.1, total_iters=len(loader))
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            F.mse_loss(model(x), y).backward()
            if epoch == 0:
                warmup.step()
            optimizer.step()

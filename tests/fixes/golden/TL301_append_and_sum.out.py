import torch
import torch.nn.functional as F


def train(model, loader, optimizer, epochs):
    model.train()
    step_losses = []
    for epoch in range(epochs):
        epoch_loss = 0.0
        for series, target in loader:
            pred = model(series)
            loss = F.smooth_l1_loss(pred, target)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            step_losses.append(loss.detach())
            epoch_loss = epoch_loss + (loss * series.size(0)).item()
        print(f"epoch {epoch}: mean loss {epoch_loss / len(loader):.4f}")
    return step_losses

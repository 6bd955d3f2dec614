import torch.nn.functional as F


def train(model, loader, optimizer, devices):
    for epoch, device in enumerate(devices):
        for x, y in loader:
            model.to(device)
            loss = F.cross_entropy(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

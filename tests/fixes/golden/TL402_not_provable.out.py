import torch
import torch.nn.functional as F


def train_per_batch_device(model, loader, optimizer, pick_device):
    for x, y in loader:
        device = pick_device(x)
        model.to(device)
        loss = F.cross_entropy(model(x.to(device)), y.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def train_conditional(model, loader, optimizer):
    for x, y in loader:
        if torch.cuda.is_available():
            model.cuda()
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

"""Training step without clearing gradients."""
import torch
import torch.nn.functional as F


def train(model, loader, optimizer):
    model.train()
    for images, labels in loader:
        optimizer.zero_grad(set_to_none=True)
        # forward pass
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()


def main(model, loader):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train(model, loader, optimizer)

"""An MLP on MNIST-sized images whose batches come from a DataLoader over a Dataset of the file."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset, TensorDataset


class RandomDigits(Dataset):
    def __init__(self, length=40):
        self.length = length

    def __len__(self):
        return self.length

    def __getitem__(self, index):
        image = torch.randn(1, 28, 28)
        label = torch.randint(0, 10, ())
        return image, label


class MLP(nn.Module):
    def __init__(self, in_features=784, hidden=128, num_classes=10):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, num_classes)

    def forward(self, x):
        x = x.view(x.size(0), -1)
        h = F.relu(self.fc1(x))
        h = F.relu(self.fc2(h))
        logits = self.out(h)
        return logits


def train_epoch(model, loader, optimizer):
    model.train()
    for images, labels in loader:
        optimizer.zero_grad()
        logits = model(images)
        loss = F.cross_entropy(logits, labels)
        loss.backward()
        optimizer.step()


def evaluate(model, features, targets, batch_size):
    loader = DataLoader(TensorDataset(features, targets), batch_size=batch_size, drop_last=True)
    correct = 0
    for batch_x, batch_y in loader:
        scores = model(batch_x)
        predicted = scores.argmax(dim=1)
        correct += (predicted == batch_y).sum().item()
    return correct


if __name__ == "__main__":
    batch_size = 8
    model = MLP()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_loader = DataLoader(RandomDigits(), batch_size=batch_size, shuffle=True, drop_last=True)
    train_epoch(model, train_loader, optimizer)
    features = torch.randn(30, 1, 28, 28)
    targets = torch.randint(0, 10, (30,))
    evaluate(model, features, targets, batch_size=6)
    for step, (images, labels) in enumerate(train_loader):
        logits = model(images)
        if step == 1:
            break

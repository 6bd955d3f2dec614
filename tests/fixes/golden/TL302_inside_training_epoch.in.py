"""Train, then validate after every epoch (module-level script)."""
import torch
import torch.nn.functional as F


def train_one_epoch(model, loader, optimizer):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()


model = torch.nn.Linear(8, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = val_loader = [(torch.randn(4, 8), torch.randint(0, 3, (4,)))]
for epoch in range(3):
    train_one_epoch(model, loader, optimizer)
    model.eval()
    val_loss = 0.0
    for x, y in val_loader:
        val_loss += F.cross_entropy(model(x), y).item()
    print(epoch, val_loss)

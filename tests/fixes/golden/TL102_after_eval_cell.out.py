import torch
import torch.nn.functional as F

model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Dropout(0.2), torch.nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [(torch.randn(4, 8), torch.randint(0, 2, (4,))) for _ in range(3)]

model.train()
for x, y in batches:
    optimizer.zero_grad()
    F.cross_entropy(model(x), y).backward()
    optimizer.step()

model.eval()
with torch.no_grad():
    print(sum(F.cross_entropy(model(x), y) for x, y in batches))

model.train()
for x, y in batches:
    optimizer.zero_grad()
    F.cross_entropy(model(x), y).backward()
    optimizer.step()

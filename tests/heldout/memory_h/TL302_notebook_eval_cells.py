# Notebook export: train a small tabular classifier, then evaluate it in later cells.
# TL302 probe: top-level evaluation cells after `model.eval()` that run the model with grad on (a test-set
# forward, a confusion-matrix loop over batches); near misses run a cell under `torch.no_grad()`,
# compute input gradients for feature attributions (which need the graph), and train again after
# `model.train()`.
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)
X, y = torch.randn(1000, 20), torch.randint(0, 3, (1000,))
X_test, y_test = torch.randn(200, 20), torch.randint(0, 3, (200,))
model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Dropout(0.3), nn.Linear(64, 3))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

# %% train
model.train()
for epoch in range(20):
    for idx in torch.randperm(1000).split(64):
        optimizer.zero_grad(set_to_none=True)
        F.cross_entropy(model(X[idx]), y[idx]).backward()
        optimizer.step()

# %% test accuracy
model.eval()
test_logits = model(X_test)  # expect: TL302
print("test acc", (test_logits.argmax(-1) == y_test).float().mean())

# %% confusion matrix
confusion = torch.zeros(3, 3, dtype=torch.long)
for xb, yb in zip(X_test.split(50), y_test.split(50)):
    pred = model(xb).argmax(-1)  # expect: TL302
    for t, p in zip(yb, pred):
        confusion[t, p] += 1

# %% same, without grad
with torch.no_grad():
    probs = F.softmax(model(X_test), dim=-1)  # clean

# %% input-gradient attributions
inputs = X_test[:16].clone().requires_grad_(True)
chosen = model(inputs).gather(1, y_test[:16, None]).sum()  # clean
attributions = torch.autograd.grad(chosen, inputs)[0] * inputs.detach()

# %% fine-tune a few more epochs
model.train()
for epoch in range(5):
    for idx in torch.randperm(1000).split(64):
        optimizer.zero_grad(set_to_none=True)
        F.cross_entropy(model(X[idx]), y[idx]).backward()  # clean
        optimizer.step()

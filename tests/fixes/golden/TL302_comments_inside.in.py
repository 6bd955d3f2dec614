import torch


def run(model, train_step, loader, val_loader, epochs):
    for epoch in range(epochs):
        for x, y in loader:
            train_step(model, x, y)
        model.eval()
        # validation pass
        for x, y in val_loader:  # one batch at a time
            # forward only
            logits = model(x)
            acc = (logits.argmax(1) == y).float().mean()

            print(f"val acc {acc:.3f}")  # per batch
        model.train()

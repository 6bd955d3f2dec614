"""TL405 probe: a CPU-only review classifier whose dataset tokenizes each item (nothing is moved
to a GPU, so pinning is moot): a loader without `num_workers` and one with `num_workers=0` are
reported; one with workers and no `pin_memory`, one built from a kwargs dict and one over
in-memory tensors (`TensorDataset`, nothing for workers to do) are not."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset, TensorDataset


class ReviewDataset(Dataset):
    def __init__(self, texts, labels, tokenizer, max_len=256):
        self.texts, self.labels, self.tokenizer, self.max_len = texts, labels, tokenizer, max_len

    def __len__(self):
        return len(self.texts)

    def __getitem__(self, i):
        ids = self.tokenizer.encode(self.texts[i].lower().strip())[: self.max_len]
        ids = ids + [0] * (self.max_len - len(ids))
        return torch.tensor(ids), torch.tensor(self.labels[i])


def make_loaders(train, val, tokenizer, batch_size=64, loader_kwargs=None):
    train_ds = ReviewDataset(*train, tokenizer)
    val_ds = ReviewDataset(*val, tokenizer)
    train_loader = DataLoader(train_ds, batch_size=batch_size, shuffle=True)  # expect: TL405
    val_loader = DataLoader(val_ds, batch_size=4 * batch_size, num_workers=0)  # expect: TL405
    eval_loader = DataLoader(val_ds, batch_size=4 * batch_size, num_workers=2)  # clean
    extra_loader = DataLoader(val_ds, **(loader_kwargs or {}))  # clean
    return train_loader, val_loader, eval_loader, extra_loader


def embedding_loader(embeddings, labels):
    return DataLoader(TensorDataset(embeddings, labels), batch_size=1024, shuffle=True)  # clean


def fit(train, val, tokenizer, vocab_size, epochs=5):
    train_loader, val_loader, _, _ = make_loaders(train, val, tokenizer)
    model = nn.Sequential(nn.EmbeddingBag(vocab_size, 64), nn.ReLU(), nn.Linear(64, 2))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for epoch in range(epochs):
        model.train()
        for xb, yb in train_loader:
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        correct = total = 0
        with torch.no_grad():
            for xb, yb in val_loader:
                correct += (model(xb).argmax(1) == yb).sum().item()
                total += len(yb)
        print(f"epoch {epoch}: val acc {correct / total:.3f}")
    return model

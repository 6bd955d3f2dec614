"""Clean script: 5-fold cross-validation of a tabular regressor with a small trainer class that
holds `self.model`: a fresh model and optimizer per fold, `ReduceLROnPlateau` stepped with the
validation loss after each epoch, early stopping with the best weights kept by `copy.deepcopy`,
evaluation under `torch.inference_mode()` with `self.model.eval()` and the training pass
switching back with `self.model.train()`, and out-of-fold plus test predictions averaged over
the folds. Runs on CPU or one GPU through a device variable."""
import copy

import numpy as np
import torch
from torch import nn
import torch.nn.functional as F
from sklearn.model_selection import KFold
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class ResidualMLP(nn.Module):
    def __init__(self, n_in, width=256, depth=3, p=0.15):
        super().__init__()
        self.inp = nn.Linear(n_in, width)
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.BatchNorm1d(width), nn.SiLU(), nn.Dropout(p), nn.Linear(width, width))
            for _ in range(depth)
        )
        self.out = nn.Linear(width, 1)

    def forward(self, x):
        h = self.inp(x)
        for block in self.blocks:
            h = h + block(h)
        return self.out(h).squeeze(-1)


class FoldTrainer:
    def __init__(self, n_in, lr=2e-3, patience=8):
        self.model = ResidualMLP(n_in).to(device)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=lr, weight_decay=1e-4)
        self.scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(self.optimizer, factor=0.5, patience=3)
        self.patience = patience

    def train_epoch(self, loader):
        self.model.train()
        total = torch.zeros((), device=device)
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            self.optimizer.zero_grad(set_to_none=True)
            loss = F.huber_loss(self.model(x), y, delta=1.0)
            loss.backward()
            nn.utils.clip_grad_norm_(self.model.parameters(), 2.0)
            self.optimizer.step()
            total += loss.detach() * x.size(0)
        return float(total) / len(loader.dataset)

    @torch.inference_mode()
    def predict(self, loader):
        self.model.eval()
        return torch.cat([self.model(x.to(device, non_blocking=True)).cpu() for x, *_ in loader])

    def fit(self, train_loader, val_loader, y_val, max_epochs=200):
        best, best_state, waited = float("inf"), None, 0
        for epoch in range(max_epochs):
            self.train_epoch(train_loader)
            val_loss = F.mse_loss(self.predict(val_loader), y_val).sqrt()
            self.scheduler.step(val_loss)
            if val_loss < best:
                best, best_state, waited = float(val_loss), copy.deepcopy(self.model.state_dict()), 0
            else:
                waited += 1
                if waited >= self.patience:
                    break
        self.model.load_state_dict(best_state)
        return best


def loader_of(x, y=None, shuffle=False):
    tensors = (x,) if y is None else (x, y)
    return DataLoader(TensorDataset(*tensors), batch_size=512, shuffle=shuffle, num_workers=2, pin_memory=True)


def main():
    data = np.load("train.npz")
    test = torch.from_numpy(np.load("test.npz")["x"]).float()
    x_all = torch.from_numpy(data["x"]).float()
    y_all = torch.from_numpy(data["y"]).float()
    oof = torch.zeros(len(y_all))
    test_pred = torch.zeros(len(test))
    scores = []
    for fold, (tr, va) in enumerate(KFold(n_splits=5, shuffle=True, random_state=42).split(x_all)):
        tr, va = torch.as_tensor(tr), torch.as_tensor(va)
        trainer = FoldTrainer(x_all.size(1))
        score = trainer.fit(loader_of(x_all[tr], y_all[tr], shuffle=True), loader_of(x_all[va]), y_all[va])
        oof[va] = trainer.predict(loader_of(x_all[va]))
        test_pred += trainer.predict(loader_of(test)) / 5
        scores.append(score)
        print(f"fold {fold}: rmse {score:.4f}")
    print(f"cv rmse {np.mean(scores):.4f} +- {np.std(scores):.4f}")
    print(f"oof rmse {float(F.mse_loss(oof, y_all).sqrt()):.4f}")
    torch.save(test_pred, "test_pred.pt")


if __name__ == "__main__":
    main()

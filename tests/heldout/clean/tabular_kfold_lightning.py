"""Clean script: k-fold training of a tabular model with categorical embeddings as a Lightning module,
plus an out-of-fold prediction pass and a plain-PyTorch permutation-importance helper."""
import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
import lightning as L
from sklearn.model_selection import StratifiedKFold
from torch.utils.data import DataLoader, TensorDataset


class TabularNet(nn.Module):
    def __init__(self, cardinalities, n_numeric, emb_dim=8, hidden=256, dropout=0.2):
        super().__init__()
        self.embeddings = nn.ModuleList(nn.Embedding(c + 1, min(emb_dim, (c + 1) // 2 + 1)) for c in cardinalities)
        emb_total = sum(e.embedding_dim for e in self.embeddings)
        self.numeric_norm = nn.BatchNorm1d(n_numeric)
        self.mlp = nn.Sequential(
            nn.Linear(emb_total + n_numeric, hidden), nn.BatchNorm1d(hidden), nn.ReLU(), nn.Dropout(dropout),
            nn.Linear(hidden, hidden // 2), nn.ReLU(), nn.Dropout(dropout), nn.Linear(hidden // 2, 1),
        )

    def forward(self, x_cat, x_num):
        embedded = [emb(x_cat[:, i]) for i, emb in enumerate(self.embeddings)]
        return self.mlp(torch.cat([*embedded, self.numeric_norm(x_num)], dim=1)).squeeze(-1)


class TabularModule(L.LightningModule):
    def __init__(self, cardinalities, n_numeric, lr=3e-3, pos_weight=1.0):
        super().__init__()
        self.save_hyperparameters()
        self.net = TabularNet(cardinalities, n_numeric)
        self.register_buffer("pos_weight", torch.tensor(pos_weight))

    def forward(self, x_cat, x_num):
        return self.net(x_cat, x_num)

    def training_step(self, batch, batch_idx):
        x_cat, x_num, y = batch
        loss = F.binary_cross_entropy_with_logits(self(x_cat, x_num), y, pos_weight=self.pos_weight)
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x_cat, x_num, y = batch
        logits = self(x_cat, x_num)
        self.log("val_loss", F.binary_cross_entropy_with_logits(logits, y), prog_bar=True)
        self.log("val_acc", ((logits > 0).float() == y).float().mean())

    def predict_step(self, batch, batch_idx):
        x_cat, x_num, _ = batch
        return torch.sigmoid(self(x_cat, x_num))

    def configure_optimizers(self):
        optimizer = torch.optim.AdamW(self.parameters(), lr=self.hparams.lr, weight_decay=1e-5)
        scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=self.hparams.lr,
                                                        total_steps=self.trainer.estimated_stepping_batches)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}


def to_dataset(frame, cat_cols, num_cols, target):
    return TensorDataset(
        torch.as_tensor(frame[cat_cols].to_numpy(), dtype=torch.long),
        torch.as_tensor(frame[num_cols].to_numpy(), dtype=torch.float32),
        torch.as_tensor(frame[target].to_numpy(), dtype=torch.float32),
    )


@torch.no_grad()
def permutation_importance(model, dataset, n_repeats=3, seed=0):
    model.eval()
    x_cat, x_num, y = dataset.tensors
    base = F.binary_cross_entropy_with_logits(model(x_cat, x_num), y)
    g = torch.Generator().manual_seed(seed)
    scores = {}
    for j in range(x_num.size(1)):
        deltas = []
        for _ in range(n_repeats):
            shuffled = x_num.clone()
            shuffled[:, j] = shuffled[torch.randperm(len(shuffled), generator=g), j]
            deltas.append(F.binary_cross_entropy_with_logits(model(x_cat, shuffled), y) - base)
        scores[j] = torch.stack(deltas).mean()
    return scores


def run(frame: pd.DataFrame, cat_cols, num_cols, target="label", folds=5, workers=4):
    cardinalities = [int(frame[c].max()) for c in cat_cols]
    oof = np.zeros(len(frame), dtype=np.float32)
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=0)
    for fold, (train_idx, val_idx) in enumerate(splitter.split(frame, frame[target])):
        train_ds = to_dataset(frame.iloc[train_idx], cat_cols, num_cols, target)
        val_ds = to_dataset(frame.iloc[val_idx], cat_cols, num_cols, target)
        train_loader = DataLoader(train_ds, batch_size=1024, shuffle=True, num_workers=workers,
                                  pin_memory=True, drop_last=True)
        val_loader = DataLoader(val_ds, batch_size=4096, num_workers=workers, pin_memory=True)
        module = TabularModule(cardinalities, len(num_cols))
        trainer = L.Trainer(max_epochs=20, accelerator="auto", precision="bf16-mixed", logger=False,
                            enable_checkpointing=False)
        trainer.fit(module, train_loader, val_loader)
        preds = trainer.predict(module, val_loader)
        oof[val_idx] = torch.cat(preds).float().numpy()
        print(f"fold {fold}: importance {permutation_importance(module.net, val_ds)}")
    return oof

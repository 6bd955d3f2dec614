"""TL301 probe: a trainer class with `self.model` that records per-step losses in `self.state["losses"]`
and a running `self.epoch_loss`, a Lightning `training_step` whose outputs are collected in
`self.train_outputs` for `on_train_epoch_end`, and a Fabric loop keeping the predictions of every batch;
near misses detach before storing, log `loss.detach()` through `self.log`, and keep the last loss as a
plain attribute that is overwritten every step."""
import lightning as L
import torch
from torch import nn
import torch.nn.functional as F


class RankerTrainer:
    def __init__(self, model: nn.Module, loader, lr=1e-3):
        self.model = model
        self.loader = loader
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)
        self.state = {"losses": [], "grad_norms": []}
        self.epoch_loss = 0.0
        self.last_loss = None

    def train_epoch(self):
        self.model.train()
        for query, pos, neg in self.loader:
            margin = self.model(query, pos) - self.model(query, neg)
            loss = F.softplus(-margin).mean()
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            norm = nn.utils.clip_grad_norm_(self.model.parameters(), 5.0)
            self.optimizer.step()
            self.state["losses"].append(loss)  # expect: TL301
            self.state["grad_norms"].append(norm)  # clean
            self.epoch_loss += loss  # expect: TL301
            self.last_loss = loss  # clean


class LitTagger(L.LightningModule):
    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model
        self.train_outputs = []

    def training_step(self, batch, batch_idx):
        tokens, tags = batch
        logits = self.model(tokens)
        loss = F.cross_entropy(logits.transpose(1, 2), tags, ignore_index=-100)
        self.log("train_loss", loss.detach())  # clean
        self.train_outputs.append(loss.detach())  # clean
        return loss

    def on_train_epoch_end(self):
        self.log("epoch_loss", torch.stack(self.train_outputs).mean())
        self.train_outputs.clear()

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=3e-4)


def fabric_fit(fabric: L.Fabric, model, loader, optimizer, epochs=2):
    model, optimizer = fabric.setup(model, optimizer)
    loader = fabric.setup_dataloaders(loader)
    all_preds = []
    kept = []
    for epoch in range(epochs):
        model.train()
        for x, y in loader:
            optimizer.zero_grad(set_to_none=True)
            preds = model(x)
            loss = F.binary_cross_entropy_with_logits(preds, y)
            fabric.backward(loss)
            optimizer.step()
            all_preds.append(preds)  # expect: TL301
            kept.append(preds.sigmoid().detach().cpu())  # clean
    return all_preds, kept

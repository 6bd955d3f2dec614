"""Clean: a Lightning-style denoising autoencoder for tabular anomaly detection: the
`training_step` returns its loss and logs a detached value, validation and scoring run in the
Trainer's own eval mode and no-grad context, reconstruction errors are collected in a list and
joined once, and weights are loaded with `weights_only=True`."""
import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class DenoisingAE(L.LightningModule):
    def __init__(self, n_features, hidden=64, bottleneck=8, noise=0.1, lr=1e-3):
        super().__init__()
        self.save_hyperparameters()
        self.encoder = nn.Sequential(nn.Linear(n_features, hidden), nn.SiLU(), nn.Dropout(0.1),
                                     nn.Linear(hidden, bottleneck))
        self.decoder = nn.Sequential(nn.Linear(bottleneck, hidden), nn.SiLU(), nn.Linear(hidden, n_features))
        self.val_errors = []

    def forward(self, x):
        return self.decoder(self.encoder(x))

    def training_step(self, batch, batch_idx):
        (x,) = batch
        noisy = x + self.hparams.noise * torch.randn_like(x)
        loss = F.mse_loss(self(noisy), x)
        self.log("train_loss", loss.detach(), prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        (x,) = batch
        err = (self(x) - x).pow(2).mean(-1)
        self.val_errors.append(err)
        self.log("val_loss", err.mean())

    def on_validation_epoch_end(self):
        errors = torch.cat(self.val_errors)
        self.log("val_p99", torch.quantile(errors, 0.99))
        self.val_errors.clear()

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.hparams.lr)


def fit(train_x, val_x, epochs=20, workers=4):
    train_loader = DataLoader(TensorDataset(train_x), batch_size=256, shuffle=True, num_workers=workers,
                              pin_memory=True)
    val_loader = DataLoader(TensorDataset(val_x), batch_size=1024, num_workers=workers, pin_memory=True)
    model = DenoisingAE(train_x.size(1))
    trainer = L.Trainer(max_epochs=epochs, accelerator="auto", precision="bf16-mixed", log_every_n_steps=20)
    trainer.fit(model, train_loader, val_loader)
    return model


@torch.no_grad()
def anomaly_scores(ckpt_path, x, n_features, batch_size=4096):
    model = DenoisingAE(n_features)
    model.load_state_dict(torch.load(ckpt_path, map_location="cpu", weights_only=True)["state_dict"])
    model.eval()
    scores = []
    for chunk in x.split(batch_size):
        scores.append((model(chunk) - chunk).pow(2).mean(-1))
    return torch.cat(scores)

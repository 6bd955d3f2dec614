"""TL408 probe: a Lightning module that turns anomaly detection on through imported names
(`set_detect_anomaly(mode=True)` in `on_fit_start`, `with detect_anomaly():` in
`training_step`), against the Trainer's own `detect_anomaly=` option driven by config."""
import lightning as L
import torch
import torch.nn.functional as F
from torch import nn
from torch.autograd import detect_anomaly, set_detect_anomaly


class TinyUNetModule(L.LightningModule):
    def __init__(self, lr=1e-3):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 1, 3, padding=1))
        self.lr = lr

    def on_fit_start(self):
        set_detect_anomaly(mode=True)  # expect: TL408

    def training_step(self, batch, batch_idx):
        noisy, clean = batch
        with detect_anomaly():  # expect: TL408
            loss = F.mse_loss(self.net(noisy), clean)
        self.log("train/loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)


def fit(datamodule, cfg):
    trainer = L.Trainer(max_epochs=cfg.epochs, detect_anomaly=cfg.debug, precision="bf16-mixed")  # clean
    trainer.fit(TinyUNetModule(cfg.lr), datamodule=datamodule)

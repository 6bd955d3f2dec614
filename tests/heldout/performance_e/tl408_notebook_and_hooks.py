"""TL408 probe: a notebook that turns anomaly detection on in its setup cell through a module
alias (`import torch.autograd as autograd`, `autograd.set_detect_anomaly(True)`) and then
trains, and a trainer's backward helper wrapped in `with autograd.detect_anomaly():`; near
misses switch it off after training, guard it behind an environment variable, and pass a
config value."""
import os

import torch
import torch.autograd as autograd

# %% setup
autograd.set_detect_anomaly(True)  # expect: TL408
DEBUG = os.environ.get("DEBUG_AUTOGRAD") == "1"
if DEBUG:
    autograd.set_detect_anomaly(True)  # clean


class Trainer:
    def __init__(self, model, optimizer, cfg):
        self.model, self.optimizer, self.cfg = model, optimizer, cfg
        torch.autograd.set_detect_anomaly(cfg.detect_anomaly)  # clean

    def backward(self, loss):
        with autograd.detect_anomaly():  # expect: TL408
            loss.backward()

    def fit(self, loader):
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(self.model(x), y)
            self.optimizer.zero_grad(set_to_none=True)
            self.backward(loss)
            self.optimizer.step()
        autograd.set_detect_anomaly(False)  # clean


# %% train
net = torch.nn.Linear(8, 1)
trainer = Trainer(net, torch.optim.SGD(net.parameters(), lr=0.1), cfg=None)

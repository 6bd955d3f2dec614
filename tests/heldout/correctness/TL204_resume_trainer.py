"""TL204 probe: a trainer's resume method that loads the model and an EMA copy non-strictly and ignores
the result; near misses are optimizer/scaler/scheduler loads and a returned result."""
import torch
from torch import nn


class Trainer:
    def __init__(self, model: nn.Module, ema: nn.Module, optimizer, scheduler):
        self.model = model
        self.ema = ema
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.scaler = torch.amp.GradScaler("cuda")

    def resume(self, path):
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
        self.model.load_state_dict(ckpt["model"], strict=False)  # expect: TL204
        self.ema.load_state_dict(ckpt["ema"], strict=False)  # expect: TL204
        self.optimizer.load_state_dict(ckpt["optimizer"])  # clean
        self.scheduler.load_state_dict(ckpt["scheduler"])  # clean
        self.scaler.load_state_dict(ckpt["scaler"])  # clean
        return ckpt["step"]

    def warm_start(self, state):
        return self.model.load_state_dict(state, strict=False)  # clean

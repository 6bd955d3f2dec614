"""TL101 probe: a mixed-precision trainer class whose loops step through a GradScaler, an accelerate-style
loop that clears at the end of the step, and a helper-based step that clears gradients elsewhere."""
import torch
from torch import nn
import torch.nn.functional as F


class AudioTaggerTrainer:
    def __init__(self, model: nn.Module, loader, lr=3e-4):
        self.model = model
        self.loader = loader
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.05)
        self.scaler = torch.amp.GradScaler("cuda")

    def train_epoch(self):
        self.model.train()
        for spec, tags in self.loader:  # expect: TL101
            with torch.autocast(device_type="cuda", dtype=torch.float16):
                logits = self.model(spec)
                loss = F.binary_cross_entropy_with_logits(logits, tags)
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()

    def train_epoch_fixed(self):
        self.model.train()
        for spec, tags in self.loader:  # clean
            self.optimizer.zero_grad(set_to_none=True)
            with torch.autocast(device_type="cuda", dtype=torch.float16):
                loss = F.binary_cross_entropy_with_logits(self.model(spec), tags)
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()

    def _apply_update(self):
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)

    def train_epoch_helper(self):
        self.model.train()
        for spec, tags in self.loader:  # clean
            loss = F.binary_cross_entropy_with_logits(self.model(spec), tags)
            loss.backward()
            self._apply_update()


def train_with_accelerate(accelerator, model, optimizer, loader, epochs):
    model.train()
    for epoch in range(epochs):
        for batch in loader:  # clean
            loss = F.cross_entropy(model(batch["audio"]), batch["label"])
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()


def finetune_head(model, head_optimizer, loader, steps):
    model.train()
    data = iter(loader)
    for _ in range(steps):  # expect: TL101
        spec, tags = next(data)
        F.binary_cross_entropy_with_logits(model(spec), tags).backward()
        head_optimizer.step()

"""TL704 probe: a mixed-precision trainer on the device-specific AMP API imported by name
(the import, `autocast()` and `GradScaler()` uses) and `F.upsample`, against the
`torch.amp` spellings and `F.interpolate`."""
import torch
import torch.nn.functional as F
from torch.cuda.amp import GradScaler, autocast  # expect: TL704


def train(model, loader, optimizer, epochs, device="cuda"):
    scaler = GradScaler()  # expect: TL704
    model.train()
    for _ in range(epochs):
        for images, masks in loader:
            images, masks = images.to(device), masks.to(device)
            optimizer.zero_grad(set_to_none=True)
            with autocast():  # expect: TL704
                logits = model(images)
                logits = F.upsample(logits, size=masks.shape[-2:], mode="bilinear")  # expect: TL704
                loss = F.cross_entropy(logits, masks)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()


def train_v2(model, loader, optimizer, epochs, device="cuda"):
    scaler = torch.amp.GradScaler("cuda")  # clean
    model.train()
    for _ in range(epochs):
        for images, masks in loader:
            images, masks = images.to(device), masks.to(device)
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast(device_type="cuda", dtype=torch.float16):  # clean
                logits = F.interpolate(model(images), size=masks.shape[-2:], mode="bilinear")  # clean
                loss = F.cross_entropy(logits, masks)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()

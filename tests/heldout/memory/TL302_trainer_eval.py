"""TL302 probe: a trainer's `evaluate` on `self.model` and a list-comprehension `predict` after `.eval()`,
both building graphs; near misses are `set_grad_enabled(False)`, a combined `with autocast(), no_grad():`,
and a saliency function that does call `.backward()`."""
import torch
from torch import nn


class SegTrainer:
    def __init__(self, model: nn.Module, val_loader):
        self.model = model
        self.val_loader = val_loader

    def evaluate(self):
        self.model.eval()
        inter = union = 0
        for image, mask in self.val_loader:
            pred = self.model(image).argmax(dim=1)  # expect: TL302
            inter += ((pred == 1) & (mask == 1)).sum()
            union += ((pred == 1) | (mask == 1)).sum()
        return inter / union.clamp_min(1)

    def evaluate_amp(self):
        self.model.eval()
        inter = union = 0
        with torch.autocast(device_type="cuda", dtype=torch.float16), torch.no_grad():
            for image, mask in self.val_loader:
                pred = self.model(image).argmax(dim=1)  # clean
                inter += ((pred == 1) & (mask == 1)).sum()
                union += ((pred == 1) | (mask == 1)).sum()
        return inter / union.clamp_min(1)


def predict(model, images):
    model.eval()
    return [model(batch).argmax(dim=1) for batch in images.split(32)]  # expect: TL302


def predict_no_grad_mode(model, images):
    model.eval()
    with torch.set_grad_enabled(False):
        return [model(batch).argmax(dim=1) for batch in images.split(32)]  # clean


def saliency_map(model, image):
    model.eval()
    image = image.clone().requires_grad_(True)
    score = model(image[None]).max()  # clean
    score.backward()
    return image.grad.abs().amax(dim=0)

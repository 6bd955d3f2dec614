"""TL404 probe: per-sample model calls over `range(B)` where the batch size sits in a variable
(`B = frames.size(0)`, `B, C, H, W = images.shape`), against a loop over the height taken from
the same unpacking and a loss computed per sample (no model call)."""
import torch
import torch.nn.functional as F


@torch.no_grad()
def caption_each(captioner, images, max_len=20):
    captioner.eval()
    B, C, H, W = images.shape
    captions = []
    for b in range(B):
        captions.append(captioner(images[b].unsqueeze(0), max_len=max_len))  # expect: TL404
    return captions


@torch.no_grad()
def track_frames(detector, frames):
    detector.eval()
    B = frames.size(0)
    boxes = []
    for t in range(B):
        boxes.append(detector(frames[t][None])[0]["boxes"])  # expect: TL404
    return boxes


@torch.no_grad()
def row_profiles(model, images):
    model.eval()
    B, C, H, W = images.shape
    rows = []
    for r in range(H):
        rows.append(model(images[:, :, r]))  # clean
    return torch.stack(rows, dim=2)


def per_sample_losses(logits, targets):
    B = logits.size(0)
    return torch.stack([F.cross_entropy(logits[i:i + 1], targets[i:i + 1]) for i in range(B)])  # clean

"""TL404 probe: segmentation inference helpers that run the network one image at a time over
`range(images.shape[0])` and `range(len(batch))`, against a loop over time steps of an RNN
cell and a multi-scale loop that feeds the whole batch at each scale."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvGRUCell(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.gates = nn.Conv2d(2 * ch, 2 * ch, 3, padding=1)
        self.cand = nn.Conv2d(2 * ch, ch, 3, padding=1)

    def forward(self, x, h):
        z, r = torch.sigmoid(self.gates(torch.cat([x, h], dim=1))).chunk(2, dim=1)
        n = torch.tanh(self.cand(torch.cat([x, r * h], dim=1)))
        return (1 - z) * h + z * n


@torch.no_grad()
def predict_masks(seg_model, images):
    seg_model.eval()
    masks = []
    for b in range(images.shape[0]):
        logits = seg_model(images[b].unsqueeze(0))  # expect: TL404
        masks.append(logits.argmax(dim=1))
    return torch.cat(masks)


@torch.no_grad()
def predict_dict_batch(seg_model, batch):
    seg_model.eval()
    masks = []
    for i in range(len(batch)):
        masks.append(seg_model(batch[i][None])["out"].argmax(1))  # expect: TL404
    return masks


@torch.no_grad()
def multiscale_predict(seg_model, images, scales=(0.75, 1.0, 1.25)):
    seg_model.eval()
    h, w = images.shape[-2:]
    total = 0
    for s in scales:
        scaled = F.interpolate(images, scale_factor=s, mode="bilinear", align_corners=False)
        total = total + F.interpolate(seg_model(scaled), size=(h, w), mode="bilinear", align_corners=False)  # clean
    return total / len(scales)


def run_clip(cell, frames, h):
    outputs = []
    for t in range(frames.size(1)):
        h = cell(frames[:, t], h)  # clean
        outputs.append(h)
    return torch.stack(outputs, dim=1)

"""TL403 probe: accumulators grown with `torch.cat` inside loops. A DDIM sampler keeping its whole
trajectory with `traj = torch.cat([traj, x[None]])` over the scheduler's timesteps, a detection
evaluation gathering kept boxes across the validation loader, and a recommender's item-embedding
export written `embs = e if embs is None else torch.cat([embs, e])`; near misses are an
autoregressive forecaster that feeds the grown sequence back into the model (each step reads it),
a fusion over a literal four FPN levels, and per-batch lists concatenated once after the loop."""
import torch
import torch.nn.functional as F
from torchvision.ops import batched_nms


@torch.no_grad()
def ddim_sample(unet, scheduler, shape, device, steps=50):
    unet.eval()
    scheduler.set_timesteps(steps)
    x = torch.randn(shape, device=device)
    traj = x[None]
    for t in scheduler.timesteps:
        eps = unet(x, t).sample
        x = scheduler.step(eps, t, x).prev_sample
        traj = torch.cat([traj, x[None]])  # expect: TL403
    return x, traj


@torch.no_grad()
def collect_detections(model, loader, device, iou=0.5):
    model.eval()
    all_boxes = torch.empty(0, 6, device=device)
    for images, _ in loader:
        out = model(images.to(device))
        boxes, scores, labels = out["boxes"], out["scores"], out["labels"]
        keep = batched_nms(boxes, scores, labels, iou)
        dets = torch.cat([boxes[keep], scores[keep, None], labels[keep, None].float()], dim=1)  # clean
        all_boxes = torch.cat([all_boxes, dets], dim=0)  # expect: TL403
    return all_boxes


@torch.no_grad()
def export_item_embeddings(item_tower, item_loader, device):
    item_tower.eval()
    embs = None
    for ids, feats in item_loader:
        e = F.normalize(item_tower(ids.to(device), feats.to(device)), dim=-1)
        embs = e if embs is None else torch.cat([embs, e])  # expect: TL403
    return embs


@torch.no_grad()
def rollout_forecast(model, history, horizon):
    model.eval()
    seq = history
    for _ in range(horizon):
        y_next = model(seq[:, -96:])[:, -1:]
        seq = torch.cat([seq, y_next], dim=1)  # clean
    return seq[:, -horizon:]


def fuse_levels(feats, size):
    fused = F.interpolate(feats[0], size=size, mode="bilinear", align_corners=False)
    for lvl in range(1, 4):
        up = F.interpolate(feats[lvl], size=size, mode="bilinear", align_corners=False)
        fused = torch.cat([fused, up], dim=1)  # clean
    return fused


@torch.no_grad()
def predict_all(model, loader, device):
    model.eval()
    outs = []
    for x in loader:
        outs.append(model(x.to(device)).cpu())
    return torch.cat(outs)  # clean

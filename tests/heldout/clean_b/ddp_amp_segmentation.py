"""Clean script: DistributedDataParallel semantic-segmentation training launched with torchrun,
mixed precision with `torch.amp.GradScaler`, a `DistributedSampler` with `set_epoch`, a
poly learning-rate schedule, a validation pass under `torch.inference_mode()` with an
all-reduced confusion matrix, and rank-0 checkpointing. No rule may fire."""
import argparse
import os

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler
from torchvision.models.segmentation import deeplabv3_resnet50


class SegFolder(Dataset):
    MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
    STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)

    def __init__(self, root, split, crop=512):
        self.images = sorted(os.listdir(os.path.join(root, split, "images")))
        self.root, self.split, self.crop = root, split, crop

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        name = self.images[i]
        image = Image.open(os.path.join(self.root, self.split, "images", name)).convert("RGB")
        mask = Image.open(os.path.join(self.root, self.split, "masks", name.replace(".jpg", ".png")))
        image = image.resize((self.crop, self.crop), Image.BILINEAR)
        mask = mask.resize((self.crop, self.crop), Image.NEAREST)
        x = (np.asarray(image, dtype=np.float32) / 255.0 - self.MEAN) / self.STD
        return torch.from_numpy(x.transpose(2, 0, 1).copy()), torch.from_numpy(np.asarray(mask, dtype=np.int64).copy())


def confusion(pred, target, num_classes, ignore_index=255):
    keep = target != ignore_index
    idx = target[keep] * num_classes + pred[keep]
    return torch.bincount(idx, minlength=num_classes ** 2).view(num_classes, num_classes)


@torch.inference_mode()
def validate(model, loader, num_classes, device):
    model.eval()
    conf = torch.zeros(num_classes, num_classes, dtype=torch.long, device=device)
    for images, masks in loader:
        images = images.to(device, non_blocking=True)
        masks = masks.to(device, non_blocking=True)
        with torch.autocast(device_type="cuda", dtype=torch.float16):
            logits = model(images)["out"]
        conf += confusion(logits.argmax(dim=1), masks, num_classes)
    dist.all_reduce(conf)
    iou = conf.diag() / (conf.sum(0) + conf.sum(1) - conf.diag()).clamp(min=1)
    return iou.mean().item()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--root", required=True)
    p.add_argument("--classes", type=int, default=21)
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--workers", type=int, default=8)
    args = p.parse_args()

    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    is_main = dist.get_rank() == 0

    train_ds, val_ds = SegFolder(args.root, "train"), SegFolder(args.root, "val")
    train_sampler = DistributedSampler(train_ds, shuffle=True)
    train_loader = DataLoader(train_ds, batch_size=args.batch_size, sampler=train_sampler,
                              num_workers=args.workers, pin_memory=True, drop_last=True, persistent_workers=True)
    val_loader = DataLoader(val_ds, batch_size=args.batch_size, sampler=DistributedSampler(val_ds, shuffle=False),
                            num_workers=args.workers, pin_memory=True)

    model = deeplabv3_resnet50(weights=None, weights_backbone="DEFAULT", num_classes=args.classes)
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model).to(device)
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)
    total_iters = args.epochs * len(train_loader)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda it: (1 - it / total_iters) ** 0.9)
    scaler = torch.amp.GradScaler("cuda")

    for epoch in range(args.epochs):
        train_sampler.set_epoch(epoch)
        model.train()
        running = torch.zeros((), device=device)
        for it, (images, masks) in enumerate(train_loader):
            images = images.to(device, non_blocking=True)
            masks = masks.to(device, non_blocking=True)
            with torch.autocast(device_type="cuda", dtype=torch.float16):
                out = model(images)
                loss = F.cross_entropy(out["out"], masks, ignore_index=255)
                loss = loss + 0.4 * F.cross_entropy(out["aux"], masks, ignore_index=255)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            running += loss.detach()
            if is_main and it % 50 == 0:
                print(f"epoch {epoch} iter {it}: loss {loss.item():.4f}")
        dist.all_reduce(running)
        miou = validate(model, val_loader, args.classes, device)
        if is_main:
            print(f"epoch {epoch}: train loss {running.item() / (len(train_loader) * dist.get_world_size()):.4f} "
                  f"mIoU {miou:.4f}")
            torch.save({"model": model.module.state_dict(), "epoch": epoch}, "deeplab_last.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

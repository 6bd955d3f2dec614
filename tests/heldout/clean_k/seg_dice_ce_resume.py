"""Binary-and-multiclass segmentation training with a dice + cross-entropy loss, resumable from the
last checkpoint (model, optimizer, scheduler, epoch), with a per-class IoU evaluation."""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader


class ConvBlock(nn.Sequential):
    def __init__(self, c_in, c_out):
        super().__init__(nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True),
                         nn.Conv2d(c_out, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True))


class TinyUNet(nn.Module):
    def __init__(self, in_ch=3, n_classes=4, w=32):
        super().__init__()
        self.enc1, self.enc2, self.enc3 = ConvBlock(in_ch, w), ConvBlock(w, 2 * w), ConvBlock(2 * w, 4 * w)
        self.up2 = nn.ConvTranspose2d(4 * w, 2 * w, 2, stride=2)
        self.dec2 = ConvBlock(4 * w, 2 * w)
        self.up1 = nn.ConvTranspose2d(2 * w, w, 2, stride=2)
        self.dec1 = ConvBlock(2 * w, w)
        self.head = nn.Conv2d(w, n_classes, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        e3 = self.enc3(F.max_pool2d(e2, 2))
        d2 = self.dec2(torch.cat([self.up2(e3), e2], dim=1))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], dim=1))
        return self.head(d1)


def dice_ce_loss(logits, mask, smooth=1.0, ignore_index=255):
    ce = F.cross_entropy(logits, mask, ignore_index=ignore_index)
    valid = (mask != ignore_index).unsqueeze(1)
    probs = logits.softmax(dim=1) * valid
    onehot = F.one_hot(mask.clamp(max=logits.shape[1] - 1), logits.shape[1]).permute(0, 3, 1, 2) * valid
    inter = (probs * onehot).sum(dim=(0, 2, 3))
    denom = probs.sum(dim=(0, 2, 3)) + onehot.sum(dim=(0, 2, 3))
    return ce + (1 - (2 * inter + smooth) / (denom + smooth)).mean()


@torch.no_grad()
def per_class_iou(model, loader, n_classes, device):
    model.eval()
    hist = torch.zeros(n_classes, n_classes, dtype=torch.long, device=device)
    for images, masks in loader:
        images, masks = images.to(device, non_blocking=True), masks.to(device, non_blocking=True)
        preds = model(images).argmax(1)
        keep = masks != 255
        hist += torch.bincount(masks[keep] * n_classes + preds[keep], minlength=n_classes ** 2).view(n_classes, n_classes)
    iou = hist.diag() / (hist.sum(0) + hist.sum(1) - hist.diag()).clamp_min(1)
    return iou.cpu()


def train(train_ds, val_ds, out_dir, epochs=100, n_classes=4, lr=1e-3):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_loader = DataLoader(train_ds, batch_size=16, shuffle=True, num_workers=8, pin_memory=True, drop_last=True)
    val_loader = DataLoader(val_ds, batch_size=16, num_workers=4, pin_memory=True)
    model = TinyUNet(n_classes=n_classes).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=lr, total_steps=epochs * len(train_loader))
    start = 0
    last = os.path.join(out_dir, "last.pt")
    if os.path.exists(last):
        ckpt = torch.load(last, map_location=device, weights_only=True)
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scheduler.load_state_dict(ckpt["scheduler"])
        start = ckpt["epoch"] + 1
    for epoch in range(start, epochs):
        model.train()
        for images, masks in train_loader:
            images, masks = images.to(device, non_blocking=True), masks.to(device, non_blocking=True)
            loss = dice_ce_loss(model(images), masks)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
        iou = per_class_iou(model, val_loader, n_classes, device)
        print(f"epoch {epoch}: mIoU {iou.mean():.4f} per class {iou.tolist()}")
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(), "epoch": epoch}, last)

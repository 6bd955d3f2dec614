"""Clean script: fine-tuning a torchvision Faster R-CNN on a small COCO-format dataset, the way
the torchvision tutorial does it: pretrained weights through `weights=` enums, the box
predictor swapped for the new class count, backbone layers frozen by name, a tuple collate,
a `train_one_epoch` method of a trainer class with AMP and warm-up, a `LambdaLR` warm-up
stepped after the optimizer, evaluation under `torch.no_grad()` with `model.eval()`, and the
best checkpoint by mean IoU of matched boxes. No rule may fire."""
import argparse
import json
import logging
import math
from pathlib import Path

import torch
import torchvision
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision.models.detection import FasterRCNN_ResNet50_FPN_V2_Weights, fasterrcnn_resnet50_fpn_v2
from torchvision.models.detection.faster_rcnn import FastRCNNPredictor
from torchvision.transforms import v2 as T

logger = logging.getLogger(__name__)


class CocoSubset(Dataset):
    def __init__(self, root: Path, split: str, train: bool):
        ann = json.loads((root / f"{split}.json").read_text())
        self.root = root / split
        self.images = {img["id"]: img["file_name"] for img in ann["images"]}
        self.ids = sorted(self.images)
        self.boxes = {i: [] for i in self.ids}
        for a in ann["annotations"]:
            x, y, w, h = a["bbox"]
            if w > 1 and h > 1:
                self.boxes[a["image_id"]].append(([x, y, x + w, y + h], a["category_id"]))
        ops = [T.ToImage(), T.ToDtype(torch.float32, scale=True)]
        if train:
            ops.insert(1, T.RandomHorizontalFlip(0.5))
        self.transform = T.Compose(ops)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        image_id = self.ids[i]
        image = Image.open(self.root / self.images[image_id]).convert("RGB")
        anns = self.boxes[image_id]
        boxes = torch.tensor([b for b, _ in anns], dtype=torch.float32).reshape(-1, 4)
        labels = torch.tensor([c for _, c in anns], dtype=torch.int64)
        target = {"boxes": torchvision.tv_tensors.BoundingBoxes(boxes, format="XYXY", canvas_size=image.size[::-1]),
                  "labels": labels}
        return self.transform(image, target)


def collate(batch):
    return tuple(zip(*batch))


class Trainer:
    def __init__(self, model, optimizer, device, amp=True, warmup_iters=500):
        self.model = model
        self.optimizer = optimizer
        self.device = device
        self.scaler = torch.amp.GradScaler(device.type, enabled=amp and device.type == "cuda")
        self.warmup = torch.optim.lr_scheduler.LambdaLR(
            optimizer, lambda it: min(1.0, (it + 1) / warmup_iters))

    def train_one_epoch(self, loader, epoch, print_freq=50):
        self.model.train()
        for it, (images, targets) in enumerate(loader):
            images = [img.to(self.device, non_blocking=True) for img in images]
            targets = [{k: v.to(self.device, non_blocking=True) for k, v in t.items()} for t in targets]
            with torch.autocast(device_type=self.device.type, enabled=self.scaler.is_enabled()):
                loss_dict = self.model(images, targets)
                loss = sum(loss_dict.values())
            self.optimizer.zero_grad(set_to_none=True)
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
            self.warmup.step()
            if it % print_freq == 0:
                parts = ", ".join(f"{k} {v.item():.3f}" for k, v in loss_dict.items())
                logger.info("epoch %d iter %d loss %.3f (%s)", epoch, it, loss.item(), parts)
                if not math.isfinite(loss.item()):
                    raise FloatingPointError(f"loss is {loss.item()} at epoch {epoch} iter {it}")

    @torch.no_grad()
    def evaluate(self, loader, iou_threshold=0.5):
        self.model.eval()
        matched_ious, n_gt = [], 0
        for images, targets in loader:
            outputs = self.model([img.to(self.device) for img in images])
            for out, target in zip(outputs, targets):
                gt = target["boxes"].to(self.device)
                n_gt += gt.size(0)
                if gt.numel() == 0 or out["boxes"].numel() == 0:
                    continue
                iou = torchvision.ops.box_iou(out["boxes"], gt).max(dim=0).values
                matched_ious.append(iou[iou >= iou_threshold].cpu())
        if not matched_ious:
            return 0.0
        return torch.cat(matched_ious).sum().item() / max(n_gt, 1)


def build_model(num_classes, trainable_layers=3):
    weights = FasterRCNN_ResNet50_FPN_V2_Weights.DEFAULT
    model = fasterrcnn_resnet50_fpn_v2(weights=weights, trainable_backbone_layers=trainable_layers)
    in_features = model.roi_heads.box_predictor.cls_score.in_features
    model.roi_heads.box_predictor = FastRCNNPredictor(in_features, num_classes)
    return model


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--num-classes", type=int, required=True, help="including background")
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--output", type=Path, default=Path("checkpoints"))
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)

    device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
    train_loader = DataLoader(CocoSubset(args.data, "train", train=True), batch_size=args.batch_size,
                              shuffle=True, num_workers=4, pin_memory=True, collate_fn=collate)
    val_loader = DataLoader(CocoSubset(args.data, "val", train=False), batch_size=args.batch_size,
                            num_workers=4, pin_memory=True, collate_fn=collate)

    model = build_model(args.num_classes).to(device)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(params, lr=args.lr, momentum=0.9, weight_decay=1e-4)
    decay = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[8, 11], gamma=0.1)
    trainer = Trainer(model, optimizer, device)

    args.output.mkdir(parents=True, exist_ok=True)
    best = -1.0
    for epoch in range(args.epochs):
        trainer.train_one_epoch(train_loader, epoch)
        decay.step()
        score = trainer.evaluate(val_loader)
        logger.info("epoch %d matched IoU %.4f", epoch, score)
        if score > best:
            best = score
            torch.save({"model": model.state_dict(), "epoch": epoch, "score": score}, args.output / "best.pt")


if __name__ == "__main__":
    main()

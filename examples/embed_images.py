"""Data pipeline: embed a folder of product images with a pretrained backbone and build a
nearest-neighbour index, then report retrieval accuracy on a labelled query set.

Usage: python embed_images.py --gallery data/gallery --queries data/queries --out index.pt
"""
import argparse
import csv
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision import models, transforms

IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".webp"}


class ImageFolderWithIds(Dataset):
    """Images under root/<label>/<name>.jpg; returns (image, label index, relative path)."""

    def __init__(self, root, transform):
        self.root = Path(root)
        self.paths = sorted(p for p in self.root.rglob("*") if p.suffix.lower() in IMAGE_SUFFIXES)
        self.classes = sorted({p.parent.name for p in self.paths})
        self.class_to_idx = {c: i for i, c in enumerate(self.classes)}
        self.transform = transform

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        path = self.paths[i]
        image = Image.open(path).convert("RGB")
        return self.transform(image), self.class_to_idx[path.parent.name], str(path.relative_to(self.root))


def make_transform(size=224):
    return transforms.Compose([
        transforms.Resize(int(size * 1.14)),
        transforms.CenterCrop(size),
        transforms.ToTensor(),
        transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
    ])


def make_loader(root, batch_size):
    dataset = ImageFolderWithIds(root, make_transform())
    # Mistake: JPEG decoding runs in the main process and batches are not pinned (TL405).
    return DataLoader(dataset, batch_size=batch_size, shuffle=False)


class Embedder(nn.Module):
    def __init__(self, dim=256):
        super().__init__()
        backbone = models.resnet50(weights=models.ResNet50_Weights.IMAGENET1K_V2)
        backbone.fc = nn.Identity()
        self.backbone = backbone
        self.proj = nn.Linear(2048, dim)

    def forward(self, images):
        return F.normalize(self.proj(self.backbone(images)), dim=-1)


@torch.inference_mode()
def embed_all(model, loader, device):
    model.eval()
    embeddings = torch.empty(0, model.proj.out_features)
    labels, paths = [], []
    for images, targets, names in loader:
        feats = model(images.to(device, non_blocking=True)).cpu()
        # Mistake: re-copies everything collected so far on every batch (TL403).
        embeddings = torch.cat([embeddings, feats])
        labels.extend(targets.tolist())
        paths.extend(names)
    return embeddings, torch.tensor(labels), paths


@torch.inference_mode()
def embed_with_flip(model, images, device):
    """Test-time augmentation: average each image's embedding with its mirror image."""
    model.eval()
    images = images.to(device)
    out = []
    # Mistake: one image at a time instead of one batched pass (TL404).
    for i in range(images.size(0)):
        plain = model(images[i].unsqueeze(0))
        mirrored = model(images[i].flip(-1).unsqueeze(0))
        out.append(F.normalize(plain + mirrored, dim=-1))
    return torch.cat(out)


def retrieval_accuracy(gallery, gallery_labels, queries, query_labels, k=5):
    scores = queries @ gallery.T
    topk = scores.topk(k, dim=1).indices
    hits = (gallery_labels[topk] == query_labels[:, None]).any(dim=1)
    return hits.float().mean().item()


def class_centroids(embeddings, labels, num_classes):
    sums = torch.zeros(num_classes, embeddings.size(1))
    sums.index_add_(0, labels, embeddings)
    counts = torch.bincount(labels, minlength=num_classes).clamp(min=1).unsqueeze(1)
    # Mistake: torch.tensor() of a tensor makes an extra copy and warns (TL205).
    return F.normalize(torch.tensor(sums / counts), dim=-1)


def write_neighbours(path, query_paths, gallery_paths, gallery, queries, k=5):
    scores, idx = (queries @ gallery.T).topk(k, dim=1)
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["query"] + [f"neighbour_{j}" for j in range(k)])
        for q, row in zip(query_paths, idx.tolist()):
            writer.writerow([q] + [gallery_paths[j] for j in row])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gallery", required=True)
    parser.add_argument("--queries", required=True)
    parser.add_argument("--out", default="index.pt")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--weights", default=None, help="fine-tuned projection head")
    parser.add_argument("--tta", action="store_true")
    args = parser.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Embedder().to(device)
    if args.weights:
        model.proj.load_state_dict(torch.load(args.weights, map_location=device, weights_only=True))

    gallery_loader = make_loader(args.gallery, args.batch_size)
    query_loader = make_loader(args.queries, args.batch_size)
    gallery, gallery_labels, gallery_paths = embed_all(model, gallery_loader, device)
    if args.tta:
        parts, targets, query_paths = [], [], []
        for images, labels, names in query_loader:
            parts.append(embed_with_flip(model, images, device).cpu())
            targets.extend(labels.tolist())
            query_paths.extend(names)
        queries, query_labels = torch.cat(parts), torch.tensor(targets)
    else:
        queries, query_labels, query_paths = embed_all(model, query_loader, device)

    centroids = class_centroids(gallery, gallery_labels, len(gallery_loader.dataset.classes))
    print(f"top-5 retrieval accuracy: {retrieval_accuracy(gallery, gallery_labels, queries, query_labels):.4f}")
    print(f"nearest-centroid accuracy: {(queries @ centroids.T).argmax(1).eq(query_labels).float().mean():.4f}")
    write_neighbours(Path(args.out).with_suffix(".csv"), query_paths, gallery_paths, gallery, queries)
    torch.save({"embeddings": gallery, "labels": gallery_labels, "paths": gallery_paths,
                "centroids": centroids, "classes": gallery_loader.dataset.classes}, args.out)


if __name__ == "__main__":
    main()

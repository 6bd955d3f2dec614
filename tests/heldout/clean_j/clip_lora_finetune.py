"""Fine-tune a two-tower image-text model with hand-written LoRA adapters on the text tower and
a frozen image tower; evaluate zero-shot retrieval each epoch."""
import argparse
import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, rank=8, alpha=16):
        super().__init__()
        self.base = base
        self.base.requires_grad_(False)
        self.lora_A = nn.Parameter(torch.randn(rank, base.in_features) / math.sqrt(rank))
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, rank))
        self.scale = alpha / rank

    def forward(self, x):
        return self.base(x) + (x @ self.lora_A.t() @ self.lora_B.t()) * self.scale

    @torch.no_grad()
    def merge(self):
        self.base.weight += (self.lora_B @ self.lora_A) * self.scale
        self.lora_B.zero_()


class TextTower(nn.Module):
    def __init__(self, vocab=5000, dim=256, max_len=32):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_len, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Dropout(0.1), nn.Linear(dim, dim))

    def forward(self, tokens):
        positions = torch.arange(tokens.size(1), device=tokens.device)
        h = self.tok(tokens) + self.pos(positions)[None]
        return self.mlp(h).mean(1)


class ImageTower(nn.Module):
    def __init__(self, dim=256, patch=8):
        super().__init__()
        self.proj = nn.Conv2d(3, dim, kernel_size=patch, stride=patch)
        self.norm = nn.LayerNorm(dim)

    def forward(self, images):
        tokens = self.proj(images).flatten(2).transpose(1, 2)
        return self.norm(tokens).mean(1)


def add_lora(module: nn.Module, rank: int):
    for name, child in module.named_children():
        if isinstance(child, nn.Linear):
            setattr(module, name, LoRALinear(child, rank=rank))
        else:
            add_lora(child, rank)


def contrastive_loss(img, txt, logit_scale):
    img, txt = F.normalize(img, dim=-1), F.normalize(txt, dim=-1)
    logits = logit_scale.exp() * img @ txt.t()
    labels = torch.arange(img.size(0), device=img.device)
    return (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2


@torch.no_grad()
def retrieval_accuracy(image_tower, text_tower, loader, device):
    image_tower.eval()
    text_tower.eval()
    hits, total = 0, 0
    for images, tokens in loader:
        img = F.normalize(image_tower(images.to(device, non_blocking=True)), dim=-1)
        txt = F.normalize(text_tower(tokens.to(device, non_blocking=True)), dim=-1)
        hits += (img @ txt.t()).argmax(-1).eq(torch.arange(img.size(0), device=device)).sum()
        total += img.size(0)
    return hits / total


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--rank", type=int, default=8)
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    images = torch.randn(512, 3, 32, 32)
    tokens = torch.randint(0, 5000, (512, 32))
    train_loader = DataLoader(TensorDataset(images[:448], tokens[:448]), batch_size=64, shuffle=True,
                              num_workers=2, pin_memory=True, drop_last=True)
    val_loader = DataLoader(TensorDataset(images[448:], tokens[448:]), batch_size=64,
                            num_workers=2, pin_memory=True)

    image_tower = ImageTower().to(device)
    image_tower.requires_grad_(False)
    image_tower.eval()
    text_tower = TextTower()
    add_lora(text_tower, args.rank)
    text_tower.to(device)
    logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07), device=device))
    trainable = [p for p in text_tower.parameters() if p.requires_grad] + [logit_scale]
    optimizer = torch.optim.AdamW(trainable, lr=1e-3, weight_decay=0.01)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs * len(train_loader))

    for epoch in range(args.epochs):
        text_tower.train()
        running = torch.zeros((), device=device)
        for step, (imgs, toks) in enumerate(train_loader):
            imgs, toks = imgs.to(device, non_blocking=True), toks.to(device, non_blocking=True)
            optimizer.zero_grad(set_to_none=True)
            with torch.no_grad():
                img_emb = image_tower(imgs)
            loss = contrastive_loss(img_emb, text_tower(toks), logit_scale)
            loss.backward()
            optimizer.step()
            scheduler.step()
            with torch.no_grad():
                logit_scale.clamp_(0, math.log(100))
            running += loss.detach()
            if step % 20 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.3f}")
        acc = retrieval_accuracy(image_tower, text_tower, val_loader, device)
        print(f"epoch {epoch} mean loss {float(running) / len(train_loader):.3f} retrieval@1 {float(acc):.3f}")

    for module in text_tower.modules():
        if isinstance(module, LoRALinear):
            module.merge()
    torch.save(text_tower.state_dict(), "text_tower_merged.pt")


if __name__ == "__main__":
    main()

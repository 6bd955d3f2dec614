"""Clean: CLIP-style contrastive training under DDP with an all-gather of embeddings, a learnable
temperature, AMP with `torch.amp.GradScaler`, and a zero-shot evaluation pass."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


class GatherLayer(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        out = [torch.zeros_like(x) for _ in range(dist.get_world_size())]
        dist.all_gather(out, x)
        return tuple(out)

    @staticmethod
    def backward(ctx, *grads):
        all_grads = torch.stack(grads)
        dist.all_reduce(all_grads)
        return all_grads[dist.get_rank()]


class CLIP(nn.Module):
    def __init__(self, image_encoder, text_encoder, dim=512):
        super().__init__()
        self.image_encoder = image_encoder
        self.text_encoder = text_encoder
        self.logit_scale = nn.Parameter(torch.tensor(2.659))

    def forward(self, images, tokens):
        img = F.normalize(self.image_encoder(images), dim=-1)
        txt = F.normalize(self.text_encoder(tokens), dim=-1)
        return img, txt, self.logit_scale.exp().clamp(max=100)


def clip_loss(img, txt, scale):
    all_img = torch.cat(GatherLayer.apply(img))
    all_txt = torch.cat(GatherLayer.apply(txt))
    logits = scale * img @ all_txt.T
    labels = torch.arange(img.size(0), device=img.device) + dist.get_rank() * img.size(0)
    return (F.cross_entropy(logits, labels) + F.cross_entropy(scale * txt @ all_img.T, labels)) / 2


@torch.no_grad()
def zero_shot_accuracy(model, loader, class_tokens, device):
    model.eval()
    class_emb = F.normalize(model.module.text_encoder(class_tokens.to(device)), dim=-1)
    correct = torch.zeros((), device=device)
    total = 0
    for images, labels in loader:
        img = F.normalize(model.module.image_encoder(images.to(device, non_blocking=True)), dim=-1)
        correct += ((img @ class_emb.T).argmax(-1) == labels.to(device)).sum()
        total += labels.size(0)
    return correct.item() / max(total, 1)


def main(train_ds, val_ds, class_tokens, image_encoder, text_encoder, epochs=32):
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    model = DDP(CLIP(image_encoder, text_encoder).to(device), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.2)
    scaler = torch.amp.GradScaler("cuda")
    sampler = DistributedSampler(train_ds, shuffle=True)
    loader = DataLoader(train_ds, batch_size=256, sampler=sampler, num_workers=8, pin_memory=True, drop_last=True)
    val_loader = DataLoader(val_ds, batch_size=512, num_workers=8, pin_memory=True)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        model.train()
        for step, (images, tokens) in enumerate(loader):
            images, tokens = images.to(device, non_blocking=True), tokens.to(device, non_blocking=True)
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.float16):
                loss = clip_loss(*model(images, tokens))
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            if step % 200 == 0 and dist.get_rank() == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
        acc = zero_shot_accuracy(model, val_loader, class_tokens, device)
        if dist.get_rank() == 0:
            print(f"epoch {epoch} zero-shot acc {acc:.3f}")
    dist.destroy_process_group()

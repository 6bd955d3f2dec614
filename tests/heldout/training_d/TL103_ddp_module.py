"""TL103 probe: a torchrun DDP script whose rank-0 evaluation runs the wrapped network through
`model.module(...)` under no_grad without switching it to eval mode, and a checkpoint-export helper
that traces `ddp_model.module` under `torch.inference_mode()`; near misses switch `model.module.eval()`
(or the DDP wrapper, which switches the module with it) first."""
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torchvision.models import resnet50


@torch.no_grad()
def evaluate(model, loader, device):
    correct = total = 0
    for images, labels in loader:
        logits = model.module(images.to(device, non_blocking=True))  # expect: TL103
        correct += (logits.argmax(1) == labels.to(device)).sum()
        total += labels.numel()
    return correct / total


@torch.no_grad()
def evaluate_fixed(model, loader, device):
    model.module.eval()
    correct = total = 0
    for images, labels in loader:
        logits = model.module(images.to(device, non_blocking=True))  # clean
        correct += (logits.argmax(1) == labels.to(device)).sum()
        total += labels.numel()
    return correct / total


@torch.no_grad()
def evaluate_wrapper(model, loader, device):
    model.eval()
    return sum((model.module(x.to(device)).argmax(1) == y.to(device)).sum() for x, y in loader)  # clean


def main():
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
    model = DDP(resnet50(num_classes=100).to(device), device_ids=[device.index])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-5)
    train_loader = torch.load("train_loader.pt", weights_only=False)
    val_loader = torch.load("val_loader.pt", weights_only=False)
    for epoch in range(90):
        model.train()
        train_loader.sampler.set_epoch(epoch)
        for images, labels in train_loader:
            optimizer.zero_grad(set_to_none=True)
            F.cross_entropy(model(images.to(device)), labels.to(device)).backward()
            optimizer.step()
        if rank == 0:
            print(epoch, evaluate_fixed(model, val_loader, device))
    dist.destroy_process_group()

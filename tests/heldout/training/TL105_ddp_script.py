"""TL105 probe: a torchrun DDP script that builds a per-rank device variable and then still places the
model and batches with `.cuda()`; near misses are device-type strings for autocast/GradScaler and
`torch.device("cuda", local_rank)` itself."""
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torchvision.models import resnet18


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)  # clean
    model = DDP(resnet18(num_classes=10).cuda(), device_ids=[local_rank])  # expect: TL105
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scaler = torch.amp.GradScaler("cuda")  # clean
    loader = torch.load("shard.pt", weights_only=True)
    model.train()
    for images, labels in loader:
        images = images.cuda(non_blocking=True)  # expect: TL105
        labels = labels.to(device, non_blocking=True)  # clean
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):  # clean
            loss = F.cross_entropy(model(images), labels)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

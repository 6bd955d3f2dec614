"""TL406 probe: a segmentation training script that wraps its model in `nn.DataParallel` under
a several-GPU guard and through a `from ... import DataParallel as DP` alias, against an
`isinstance` unwrap and the DistributedDataParallel path."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn import DataParallel as DP
from torch.nn.parallel import DistributedDataParallel as DDP


def wrap(model, distributed):
    if distributed:
        local_rank = int(os.environ["LOCAL_RANK"])
        dist.init_process_group("nccl")
        torch.cuda.set_device(local_rank)
        return DDP(model.cuda(local_rank), device_ids=[local_rank])  # clean
    model = model.cuda()
    if torch.cuda.device_count() > 1:
        model = nn.DataParallel(model)  # expect: TL406
    return model


def wrap_legacy(model, gpus):
    return DP(model.cuda(gpus[0]), device_ids=gpus)  # expect: TL406


def bare(model):
    return model.module if isinstance(model, (nn.DataParallel, DDP)) else model  # clean


def train(model, loader, epochs, distributed=False):
    model = wrap(model, distributed)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
    for epoch in range(epochs):
        model.train()
        for images, masks in loader:
            images, masks = images.cuda(non_blocking=True), masks.cuda(non_blocking=True)
            loss = F.cross_entropy(model(images)["out"], masks, ignore_index=255)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
    torch.save(bare(model).state_dict(), "deeplab.pt")

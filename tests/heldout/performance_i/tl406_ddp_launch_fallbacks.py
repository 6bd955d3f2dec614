"""TL406 probe: `nn.DataParallel` in training launch scripts: a GNN node-classification script
wrapping its model unconditionally, and a segmentation trainer whose multi-GPU path is
`nn.DataParallel` under `torch.cuda.device_count() > 1`; near misses are `DataParallel` as the
fallback branch beside `DistributedDataParallel` when no process group is launched, and
`nn.parallel.data_parallel` used for a no-grad feature-extraction pass."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP


def train_gnn(model, x, adj, labels, train_mask, device, epochs=200):
    model = nn.DataParallel(model).to(device)  # expect: TL406
    opt = torch.optim.Adam(model.parameters(), lr=5e-3, weight_decay=5e-4)
    x, adj, labels = x.to(device), adj.to(device), labels.to(device)
    for epoch in range(epochs):
        model.train()
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x, adj)[train_mask], labels[train_mask])
        loss.backward()
        opt.step()
    return model


def wrap_for_training(model, device):
    if "LOCAL_RANK" in os.environ:
        dist.init_process_group("nccl")
        local_rank = int(os.environ["LOCAL_RANK"])
        model = DDP(model.to(local_rank), device_ids=[local_rank])
    else:
        model = nn.DataParallel(model).to(device)  # clean
    return model


def train_segmentation(model, loader, device, epochs=50):
    model = model.to(device)
    if torch.cuda.device_count() > 1:
        model = nn.DataParallel(model)  # expect: TL406
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
    for epoch in range(epochs):
        model.train()
        for images, masks in loader:
            images, masks = images.to(device, non_blocking=True), masks.to(device, non_blocking=True)
            loss = F.cross_entropy(model(images)["out"], masks, ignore_index=255)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()


@torch.no_grad()
def extract_features(backbone, images, device_ids):
    backbone.eval()
    return nn.parallel.data_parallel(backbone, images, device_ids=device_ids)  # clean

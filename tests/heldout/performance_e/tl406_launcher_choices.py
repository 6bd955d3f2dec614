"""TL406 probe: a `from torch.nn import DataParallel` wrapper inside a notebook-style cell below a
module docstring that names DataParallel (a docstring is not a warning shown to the user), and a
trainer keeping `nn.parallel.DataParallel` for its own training; near misses are a launcher whose
fully qualified `torch.nn.parallel.DataParallel` is the fallback branch beside DDP and FSDP (a
deliberate choice per the catalogue), wrappers built with
`DistributedDataParallel` (qualified and imported by name), read `model.module` back through
`isinstance(model, torch.nn.parallel.DistributedDataParallel)`, and build an FSDP model."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.nn import DataParallel
from torch.nn.parallel import DistributedDataParallel as DDP


def wrap(model, strategy):
    if strategy == "ddp":
        local_rank = int(os.environ["LOCAL_RANK"])
        model = DDP(model.to(local_rank), device_ids=[local_rank])  # clean
    elif strategy == "fsdp":
        model = FSDP(model, use_orig_params=True)  # clean
    elif torch.cuda.device_count() > 1 and not dist.is_initialized():
        model = torch.nn.parallel.DataParallel(model.cuda())  # clean
    return model


def unwrap(model):
    if isinstance(model, torch.nn.parallel.DistributedDataParallel):  # clean
        return model.module
    return model


class Trainer:
    def __init__(self, model, optimizer):
        self.model = nn.parallel.DataParallel(model).cuda()  # expect: TL406
        self.optimizer = optimizer

    def step(self, x, y):
        loss = nn.functional.cross_entropy(self.model(x.cuda()), y.cuda())
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()


def ddp_qualified(model, rank):
    return torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])  # clean


# %% quick multi-GPU check in a notebook
net = torch.nn.Sequential(torch.nn.Linear(128, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
net = DataParallel(net).cuda()  # expect: TL406
print(net(torch.randn(64, 128, device="cuda")).shape)

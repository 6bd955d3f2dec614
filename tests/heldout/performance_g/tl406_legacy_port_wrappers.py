"""TL406 probe: legacy multi-GPU code being ported to a new torch version: `nn.DataParallel`
wrapping a GAN's generator when several GPUs are visible, `torch.nn.parallel.DataParallel`
spelt in full for the critic, and a `DataParallel` imported by name from `torch.nn`; near misses
are the port's `DistributedDataParallel` path, FSDP wrapping, an `isinstance(model,
nn.DataParallel)` check that unwraps a checkpoint from the old code, and a string naming the
class in a log line."""
import logging
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.nn import DataParallel
from torch.nn.parallel import DistributedDataParallel as DDP

log = logging.getLogger(__name__)


def wrap_legacy(generator, critic, encoder):
    if torch.cuda.device_count() > 1:
        generator = nn.DataParallel(generator)  # expect: TL406
        critic = torch.nn.parallel.DataParallel(critic, device_ids=list(range(torch.cuda.device_count())))  # expect: TL406
        encoder = DataParallel(encoder)  # expect: TL406
        log.info("wrapped with %s", "nn.DataParallel")  # clean
    return generator, critic, encoder


def wrap_distributed(generator, critic, use_fsdp=False):
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl")
    torch.cuda.set_device(local_rank)
    if use_fsdp:
        return FSDP(generator), FSDP(critic)  # clean
    generator = DDP(generator.to(local_rank), device_ids=[local_rank])  # clean
    critic = DDP(critic.to(local_rank), device_ids=[local_rank])  # clean
    return generator, critic


def unwrap(model):
    if isinstance(model, (nn.DataParallel, DDP)):  # clean
        return model.module
    return model


def state_dict_for_export(model):
    sd = unwrap(model).state_dict()
    return {k.removeprefix("module."): v for k, v in sd.items()}

"""TL406 probe: `nn.DataParallel` in multi-model code. A DCGAN script wraps its generator and
discriminator in `nn.DataParallel` when several GPUs are visible, and a distillation script wraps
the teacher in `torch.nn.DataParallel(teacher, device_ids=...)`; near misses are the
DistributedDataParallel wrap of the student, `isinstance(model, nn.DataParallel)` checks that
unwrap `.module` before saving or loading (code that must handle checkpoints written by old
runs), and a string naming the class in a log message."""
import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def build_gan(netG, netD, device, n_gpu):
    netG, netD = netG.to(device), netD.to(device)
    if device.type == "cuda" and n_gpu > 1:
        netG = nn.DataParallel(netG, list(range(n_gpu)))  # expect: TL406
        netD = nn.DataParallel(netD, list(range(n_gpu)))  # expect: TL406
    return netG, netD


def build_teacher(teacher, gpus):
    teacher = torch.nn.DataParallel(teacher, device_ids=gpus)  # expect: TL406
    return teacher.eval()


def build_student(student, local_rank):
    student = student.to(local_rank)
    return DDP(student, device_ids=[local_rank])  # clean


def unwrap(model):
    if isinstance(model, (nn.DataParallel, DDP)):  # clean
        return model.module
    return model


def save_generator(netG, path):
    torch.save(unwrap(netG).state_dict(), path)
    print("saved generator (unwrapped from nn.DataParallel if needed)")  # clean

"""TL204 probe: checkpoint loading and resuming. A resume function restores a model from
`ckpt["model"]` with `strict=False` and drops the result, a distillation script initialises the
student from the teacher's state dict (another architecture: half the keys may not match) with
the result discarded, and a torchvision backbone gets self-supervised weights positionally
(`load_state_dict(sd, False)`); near misses bind and report the keys, assert them empty, filter the
state dict against the model's keys first, load an optimizer's and a GradScaler's state (whose
`load_state_dict` returns None), and load strictly."""
import logging

import torch
import torch.nn as nn
from torchvision.models import resnet50

log = logging.getLogger(__name__)


def resume(model, optimizer, scaler, path, device):
    ckpt = torch.load(path, map_location=device, weights_only=True)
    model.load_state_dict(ckpt["model"], strict=False)  # expect: TL204
    optimizer.load_state_dict(ckpt["optimizer"])  # clean
    scaler.load_state_dict(ckpt["scaler"])  # clean
    return ckpt["epoch"] + 1


def resume_checked(model, optimizer, path, device):
    ckpt = torch.load(path, map_location=device, weights_only=True)
    missing, unexpected = model.load_state_dict(ckpt["model"], strict=False)  # clean
    if missing or unexpected:
        log.warning("missing %s, unexpected %s", missing, unexpected)
    optimizer.load_state_dict(ckpt["optimizer"])
    return ckpt["epoch"] + 1


def init_student_from_teacher(student: nn.Module, teacher: nn.Module):
    student.load_state_dict(teacher.state_dict(), strict=False)  # expect: TL204
    return student


def init_student_checked(student: nn.Module, teacher: nn.Module):
    result = student.load_state_dict(teacher.state_dict(), strict=False)  # clean
    assert not result.unexpected_keys, result.unexpected_keys
    return student


def init_student_filtered(student: nn.Module, teacher: nn.Module):
    own = student.state_dict()
    shared = {k: v for k, v in teacher.state_dict().items() if k in own and v.shape == own[k].shape}
    student.load_state_dict(shared, strict=False)  # clean
    return student, len(shared)


def ssl_backbone(path):
    backbone = resnet50(weights=None)
    sd = torch.load(path, map_location="cpu", weights_only=True)["state_dict"]
    sd = {k.removeprefix("module.encoder_q."): v for k, v in sd.items()}
    backbone.load_state_dict(sd, False)  # expect: TL204
    backbone.fc = nn.Identity()
    return backbone


def exact_backbone(path):
    backbone = resnet50(weights=None)
    backbone.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))  # clean
    return backbone

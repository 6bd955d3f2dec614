"""TL705 probe: resuming a training run: `torch.load` of the resume path and of an open file
object without `weights_only`, against `weights_only=True`, TorchScript's `torch.jit.load` and
safetensors."""
import torch
from safetensors.torch import load_file


def resume(model, optimizer, scheduler, args, device):
    start_epoch = 0
    if args.resume:
        ckpt = torch.load(args.resume, map_location=device)  # expect: TL705
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scheduler.load_state_dict(ckpt["scheduler"])
        start_epoch = ckpt["epoch"] + 1
    return start_epoch


def load_pretrained(model, path):
    with open(path, "rb") as f:
        state = torch.load(f)  # expect: TL705
    missing, unexpected = model.load_state_dict(state, strict=False)
    assert not unexpected, unexpected
    return model, missing


def load_pretrained_safe(model, path):
    state = torch.load(path, map_location="cpu", weights_only=True)  # clean
    model.load_state_dict(state)
    return model


def load_exported(path):
    return torch.jit.load(path, map_location="cpu")  # clean


def load_hf_weights(model, path):
    model.load_state_dict(load_file(path))  # clean
    return model

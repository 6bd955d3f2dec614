"""TL705 probe: checkpoint loading and resuming with several `torch.load` forms. A resume helper
loads with `map_location="cpu"`, a multi-GPU resume maps storages with a `{"cuda:0": f"cuda:{rank}"}`
dict, an evaluation script loads a teacher checkpoint with `map_location=lambda storage, loc: storage`,
a weights file received over the network is loaded from an `io.BytesIO`, and an open file handle is
loaded bare; near misses are the same loads with `weights_only=True`, an explicit
`weights_only=False` for a trusted file of pickled objects, a load with `pickle_module=`, and
safetensors' `load_file`."""
import io
import pickle

import torch
from safetensors.torch import load_file


def resume(model, optimizer, path):
    ckpt = torch.load(path, map_location="cpu")  # expect: TL705
    model.load_state_dict(ckpt["model"])
    optimizer.load_state_dict(ckpt["optimizer"])
    return ckpt["epoch"] + 1


def resume_rank(model, optimizer, path, rank):
    ckpt = torch.load(path, map_location={"cuda:0": f"cuda:{rank}"})  # expect: TL705
    model.load_state_dict(ckpt["model"])
    optimizer.load_state_dict(ckpt["optimizer"])


def load_teacher(teacher, path):
    state = torch.load(path, map_location=lambda storage, loc: storage)  # expect: TL705
    teacher.load_state_dict(state["state_dict"])
    return teacher.eval()


def load_from_bytes(model, payload: bytes):
    model.load_state_dict(torch.load(io.BytesIO(payload)))  # expect: TL705
    return model


def load_from_handle(model, path):
    with open(path, "rb") as f:
        sd = torch.load(f)  # expect: TL705
    model.load_state_dict(sd)
    return model


def resume_safe(model, optimizer, path, device):
    ckpt = torch.load(path, map_location=device, weights_only=True)  # clean
    model.load_state_dict(ckpt["model"])
    optimizer.load_state_dict(ckpt["optimizer"])
    return ckpt["epoch"] + 1


def load_trusted_run_state(path):
    state = torch.load(path, map_location="cpu", weights_only=False)  # clean
    return state["args"], state["rng"]


def load_with_pickle(path):
    return torch.load(path, map_location="cpu", pickle_module=pickle)  # clean


def load_safetensors(model, path):
    model.load_state_dict(load_file(path, device="cpu"))  # clean
    return model

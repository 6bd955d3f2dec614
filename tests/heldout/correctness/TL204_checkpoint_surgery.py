"""TL204 probe: partial checkpoint loads whose result is dropped (`strict=False` by keyword, positionally,
through a DDP wrapper's `.module`); near misses log, return or check the result, pass a variable strictness,
or load with `assign=True` onto meta tensors (keys left out stay on meta and fail loudly at first use)."""
import logging

import torch
from torch import nn

logger = logging.getLogger("finetune")


def load_backbone(model: nn.Module, path: str):
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(ckpt["model"], strict=False)  # expect: TL204
    return model


def load_encoder_only(encoder: nn.Module, path: str):
    state = torch.load(path, map_location="cpu", weights_only=True)
    state = {k.removeprefix("encoder."): v for k, v in state.items() if k.startswith("encoder.")}
    encoder.load_state_dict(state, False)  # expect: TL204


def load_on_meta(model: nn.Module, path: str):
    state = torch.load(path, map_location="cpu", mmap=True, weights_only=True)
    model.load_state_dict(state, strict=False, assign=True)  # clean
    return model


def load_backbone_logged(model: nn.Module, path: str):
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    logger.info("partial load: %s", model.load_state_dict(ckpt["model"], strict=False))  # clean
    return model


def load_encoder_checked(encoder: nn.Module, state: dict):
    incompatible = encoder.load_state_dict(state, strict=False)  # clean
    assert not incompatible.unexpected_keys, incompatible.unexpected_keys
    return encoder


def load_with_policy(model: nn.Module, state: dict, strict: bool):
    model.load_state_dict(state, strict=strict)  # clean
    return model


def load_into_ddp(ddp_model, path: str):
    state = torch.load(path, map_location="cpu", weights_only=True)
    ddp_model.module.load_state_dict(state["model"], strict=False)  # expect: TL204

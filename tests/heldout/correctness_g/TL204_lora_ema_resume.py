"""TL204 probe: LoRA fine-tuning and diffusion EMA resumption: loading a LoRA adapter's
state dict into the base model with `strict=False` and dropping the result, restoring an EMA
copy of the UNet the same way inside a resume helper, and a `strict=False` load in a loop over
the shards of a sharded checkpoint; near misses are the bound result checked for
`unexpected_keys`, the result returned to the caller, the result passed straight to a logging
call, `strict=True` loads, `peft`'s `set_peft_model_state_dict` (no `strict` argument), and an
`optimizer.load_state_dict` (no `strict` at all)."""
import copy
import logging

import torch
from peft import LoraConfig, get_peft_model, set_peft_model_state_dict
from safetensors.torch import load_file

log = logging.getLogger(__name__)


def attach_adapter(base_model, adapter_path):
    config = LoraConfig(r=16, lora_alpha=32, target_modules=["q_proj", "v_proj"], lora_dropout=0.05)
    model = get_peft_model(base_model, config)
    adapter = load_file(adapter_path)
    model.load_state_dict(adapter, strict=False)  # expect: TL204
    return model


def attach_adapter_peft(model, adapter_path):
    set_peft_model_state_dict(model, load_file(adapter_path))  # clean
    return model


def attach_adapter_checked(model, adapter_path):
    result = model.load_state_dict(load_file(adapter_path), strict=False)  # clean
    if result.unexpected_keys:
        raise KeyError(f"adapter keys not in model: {result.unexpected_keys[:5]}")
    return model


def resume(unet, optimizer, ckpt_path):
    ckpt = torch.load(ckpt_path, map_location="cpu", weights_only=True)
    unet.load_state_dict(ckpt["unet"], strict=True)  # clean
    ema_unet = copy.deepcopy(unet).requires_grad_(False)
    ema_unet.load_state_dict(ckpt["ema"], strict=False)  # expect: TL204
    optimizer.load_state_dict(ckpt["optimizer"])  # clean
    return ema_unet, ckpt["step"]


def load_shards(model, shard_paths):
    for path in shard_paths:
        shard = load_file(path)
        model.load_state_dict(shard, strict=False)  # expect: TL204
    return model


def load_backbone(model, path):
    state = torch.load(path, map_location="cpu", weights_only=True)
    return model.load_state_dict(state, strict=False)  # clean


def load_logged(model, path):
    log.info("backbone load: %s", model.load_state_dict(load_file(path), strict=False))  # clean
    return model

"""TL204 probe: checkpoint loading in an accelerate fine-tuning script: `strict=False` through
`accelerator.unwrap_model(model)`, inside a loop over several heads, and as the only statement of
a `try` block; near misses bind the result and assert on `unexpected_keys`, log the result through `logger.info`, and
use `strict=True`."""
import logging

import torch
from accelerate import Accelerator
from safetensors.torch import load_file

logger = logging.getLogger(__name__)


def load_backbone(accelerator: Accelerator, model, path):
    state = load_file(path)
    accelerator.unwrap_model(model).load_state_dict(state, strict=False)  # expect: TL204


def load_heads(model, head_paths):
    for name, path in head_paths.items():
        head = getattr(model, name)
        head.load_state_dict(torch.load(path, map_location="cpu", weights_only=True), strict=False)  # expect: TL204


def try_warm_start(model, path):
    try:
        model.load_state_dict(torch.load(path, weights_only=True), strict=False)  # expect: TL204
    except FileNotFoundError:
        logger.warning("no warm start at %s", path)


def load_adapter(model, path):
    result = model.load_state_dict(load_file(path), strict=False)  # clean
    assert not result.unexpected_keys, result.unexpected_keys
    return model


def load_logged(model, path):
    logger.info("loaded: %s", model.load_state_dict(load_file(path), strict=False))  # clean


def load_exact(model, path):
    model.load_state_dict(load_file(path), strict=True)  # clean

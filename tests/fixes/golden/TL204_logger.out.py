import logging

import torch

log = logging.getLogger(__name__)


def restore(model, path, missing_keys=None):
    if path:
        missing_keys_2, unexpected_keys = model.load_state_dict(torch.load(path, weights_only=True), strict=False)
        if missing_keys_2 or unexpected_keys:
            log.warning("load_state_dict(strict=False): missing keys %s, unexpected keys %s", missing_keys_2, unexpected_keys)
    return model

import logging

import torch

log = logging.getLogger(__name__)


def restore(model, path, missing_keys=None):
    if path:
        model.load_state_dict(torch.load(path, weights_only=True), strict=False)
    return model

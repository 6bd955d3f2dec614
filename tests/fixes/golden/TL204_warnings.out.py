import warnings
import torch


def load_backbone(model, path):
    state = torch.load(path, map_location="cpu", weights_only=True)
    missing_keys, unexpected_keys = model.backbone.load_state_dict(state, strict=False)  # head differs
    if missing_keys or unexpected_keys:
        warnings.warn(f"load_state_dict(strict=False): missing keys {missing_keys}, unexpected keys {unexpected_keys}")
    return model

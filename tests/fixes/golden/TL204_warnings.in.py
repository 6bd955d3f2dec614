import torch


def load_backbone(model, path):
    state = torch.load(path, map_location="cpu", weights_only=True)
    model.backbone.load_state_dict(state, strict=False)  # head differs
    return model

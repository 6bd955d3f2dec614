import torch


def restore(model, path):
    state = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(state)

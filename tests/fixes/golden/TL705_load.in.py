import torch


def restore(model, path):
    state = torch.load(path, map_location="cpu")
    model.load_state_dict(state)

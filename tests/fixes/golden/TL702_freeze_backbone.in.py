import torch


def freeze(model):
    for name, param in model.named_parameters():
        param.require_grad = "head" in name  # keep the head trainable

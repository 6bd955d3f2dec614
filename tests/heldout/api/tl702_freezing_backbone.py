"""TL702 probe: `require_grad` typos while freezing a detector's backbone (in a loop over
named parameters, on batch-norm affine weights) and on an input tensor for saliency, against
`requires_grad_`, `requires_grad =` and a dict key spelled the same way."""
import torch
from torch import nn


def freeze_backbone(model, train_layers=("layer4",)):
    for name, param in model.backbone.named_parameters():
        if not name.startswith(train_layers):
            param.require_grad = False  # expect: TL702


def freeze_bn_affine(model):
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.weight.require_grad = False  # expect: TL702
            m.bias.requires_grad = False  # clean


def saliency(model, image, target_class):
    model.eval()
    x = image.clone().unsqueeze(0)
    x.require_grad = True  # expect: TL702
    score = model(x)[0, target_class]
    score.backward()
    return x.grad.abs().amax(dim=1)[0]


def saliency_fixed(model, image, target_class):
    model.eval()
    x = image.clone().unsqueeze(0).requires_grad_(True)  # clean
    model(x)[0, target_class].backward()
    return x.grad.abs().amax(dim=1)[0]


def param_group_config(lr):
    cfg = {"lr": lr}
    cfg["require_grad"] = False  # clean
    return cfg

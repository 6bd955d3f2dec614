"""TL708 probe: a vision fine-tuning script from the torchvision 0.12 era: `import
torchvision.models as models`, `models.resnet50(pretrained=True)`, a detection backbone through
`fasterrcnn_resnet50_fpn(pretrained=False, pretrained_backbone=True)`, and `v2.ToTensor()` in a
transforms v2 pipeline; near misses are `weights=ResNet50_Weights.IMAGENET1K_V2`, `weights=None`,
`from torchvision import models as tv_models`, timm's `create_model(..., pretrained=True)` (timm's
own, not deprecated), `v2.ToImage()` with `v2.ToDtype(torch.float32, scale=True)`, and the
classic `transforms.ToTensor()` (not the v2 one)."""
import timm
import torch
import torch.nn as nn
import torchvision.models as models  # expect: TL708
from torchvision import models as tv_models  # clean
from torchvision import transforms
from torchvision.models import ResNet50_Weights
from torchvision.models.detection import fasterrcnn_resnet50_fpn
from torchvision.transforms import v2


def build_classifier(n_classes, legacy=True):
    if legacy:
        net = models.resnet50(pretrained=True)  # expect: TL708
    else:
        net = tv_models.resnet50(weights=ResNet50_Weights.IMAGENET1K_V2)  # clean
    net.fc = nn.Linear(net.fc.in_features, n_classes)
    return net


def build_detector():
    return fasterrcnn_resnet50_fpn(pretrained=False, pretrained_backbone=True)  # expect: TL708


def build_scratch():
    return tv_models.resnet18(weights=None)  # clean


def build_timm(name="convnext_tiny"):
    return timm.create_model(name, pretrained=True, num_classes=10)  # clean


train_tf = v2.Compose([v2.RandomResizedCrop(224), v2.RandomHorizontalFlip(), v2.ToTensor()])  # expect: TL708
eval_tf = v2.Compose([v2.Resize(256), v2.CenterCrop(224), v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])  # clean
legacy_eval_tf = transforms.Compose([transforms.Resize(256), transforms.ToTensor()])  # clean

"""TL708 probe: torchvision model builders in a distillation and segmentation repo. The teacher
is `models.resnet101(pretrained=True)` after `import torchvision.models as models`, the
segmentation baseline `deeplabv3_resnet50(pretrained=False, pretrained_backbone=True)` (two
deprecated keywords on one line: one finding), the student's builder receives the weights enum in
the first place (`mobilenet_v3_large(MobileNet_V3_Large_Weights.DEFAULT)`) and the input pipeline
uses `transforms.v2.ToTensor()`; near misses are `weights=` / `weights_backbone=` forms,
`timm.create_model(..., pretrained=True)` (timm's own keyword), the project's own
`build_student(pretrained=True)`, and `v2.ToImage()` with `v2.ToDtype`."""
import timm
import torch
import torch.nn as nn
import torchvision.models as models  # expect: TL708
from torchvision.models import MobileNet_V3_Large_Weights, ResNet101_Weights, mobilenet_v3_large
from torchvision.models.segmentation import DeepLabV3_ResNet50_Weights, deeplabv3_resnet50
from torchvision.transforms import v2


def build_teacher_legacy():
    return models.resnet101(pretrained=True).eval()  # expect: TL708


def build_teacher():
    return models.resnet101(weights=ResNet101_Weights.IMAGENET1K_V2).eval()  # clean


def build_seg_legacy(n_classes):
    model = deeplabv3_resnet50(pretrained=False, pretrained_backbone=True)  # expect: TL708
    model.classifier[4] = nn.Conv2d(256, n_classes, 1)
    return model


def build_seg(n_classes):
    model = deeplabv3_resnet50(weights=None, weights_backbone="DEFAULT", num_classes=n_classes)  # clean
    return model, DeepLabV3_ResNet50_Weights.DEFAULT.transforms()


def build_student_legacy():
    return mobilenet_v3_large(MobileNet_V3_Large_Weights.DEFAULT)  # expect: TL708


def build_student(pretrained=True):
    weights = MobileNet_V3_Large_Weights.DEFAULT if pretrained else None
    return mobilenet_v3_large(weights=weights)  # clean


def build_timm_student():
    return timm.create_model("convnext_tiny", pretrained=True, num_classes=100)  # clean


student = build_student(pretrained=True)  # clean

legacy_transform = v2.Compose([v2.Resize(256), v2.CenterCrop(224), v2.ToTensor()])  # expect: TL708
transform = v2.Compose([v2.Resize(256), v2.CenterCrop(224), v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])  # clean

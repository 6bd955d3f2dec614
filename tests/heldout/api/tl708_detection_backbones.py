"""TL708 probe: torchvision builders called with `pretrained=` and `pretrained_backbone=`
through by-name imports and the `detection` module, against `weights=` and timm's
`create_model(pretrained=True)` (not torchvision)."""
import timm
import torch.nn as nn
from torchvision.models import resnet18
from torchvision.models.detection import fasterrcnn_resnet50_fpn
from torchvision.models.detection.faster_rcnn import FastRCNNPredictor


def detector(num_classes):
    model = fasterrcnn_resnet50_fpn(pretrained=False, pretrained_backbone=True)  # expect: TL708
    in_features = model.roi_heads.box_predictor.cls_score.in_features
    model.roi_heads.box_predictor = FastRCNNPredictor(in_features, num_classes)
    return model


def detector_v2(num_classes):
    model = fasterrcnn_resnet50_fpn(weights=None, weights_backbone="DEFAULT", num_classes=num_classes)  # clean
    return model


def classifier(num_classes, pretrained=True):
    net = resnet18(pretrained=pretrained)  # expect: TL708
    net.fc = nn.Linear(net.fc.in_features, num_classes)
    return net


def timm_classifier(num_classes):
    return timm.create_model("convnext_tiny", pretrained=True, num_classes=num_classes)  # clean

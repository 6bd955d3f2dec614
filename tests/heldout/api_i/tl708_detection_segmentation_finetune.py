"""TL708 probe: detection and segmentation fine-tuning written against torchvision 0.12:
`import torchvision.models as models`, `fasterrcnn_resnet50_fpn(pretrained=True)`,
`deeplabv3_resnet50(pretrained=False, pretrained_backbone=True)`, a classifier built with its
weights enum in the first place, and `v2.ToTensor()` in the v2 transform pipeline; near misses are
`weights=` / `weights_backbone=`, timm's `create_model(..., pretrained=True)` (timm's own keyword),
`v2.ToImage()` + `v2.ToDtype(..., scale=True)`, and the v1 `transforms.ToTensor()`."""
import timm
import torch
import torchvision.models as models  # expect: TL708
from torchvision import transforms
from torchvision.models import ResNet18_Weights
from torchvision.models.detection import FasterRCNN_ResNet50_FPN_Weights, fasterrcnn_resnet50_fpn
from torchvision.models.detection.faster_rcnn import FastRCNNPredictor
from torchvision.models.segmentation import deeplabv3_resnet50
from torchvision.transforms import v2


def detector_legacy(num_classes):
    model = fasterrcnn_resnet50_fpn(pretrained=True)  # expect: TL708
    in_features = model.roi_heads.box_predictor.cls_score.in_features
    model.roi_heads.box_predictor = FastRCNNPredictor(in_features, num_classes)
    return model


def detector(num_classes):
    model = fasterrcnn_resnet50_fpn(weights=FasterRCNN_ResNet50_FPN_Weights.DEFAULT)  # clean
    in_features = model.roi_heads.box_predictor.cls_score.in_features
    model.roi_heads.box_predictor = FastRCNNPredictor(in_features, num_classes)
    return model


def segmenter_legacy(num_classes):
    return deeplabv3_resnet50(pretrained=False, pretrained_backbone=True, num_classes=num_classes)  # expect: TL708


def segmenter(num_classes):
    return deeplabv3_resnet50(weights=None, weights_backbone="DEFAULT", num_classes=num_classes)  # clean


def classifier_legacy():
    return models.resnet18(ResNet18_Weights.DEFAULT)  # expect: TL708


def classifier_timm():
    return timm.create_model("resnet50", pretrained=True, num_classes=10)  # clean


train_tf_legacy = v2.Compose([v2.RandomHorizontalFlip(), v2.ToTensor()])  # expect: TL708
train_tf = v2.Compose([v2.RandomHorizontalFlip(), v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])  # clean
eval_tf = transforms.Compose([transforms.Resize(256), transforms.ToTensor()])  # clean

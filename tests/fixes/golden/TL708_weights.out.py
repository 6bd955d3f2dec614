from torchvision import models
from torchvision.models.detection import fasterrcnn_resnet50_fpn


backbone = models.resnet50(weights=models.ResNet50_Weights.IMAGENET1K_V1)
detector = fasterrcnn_resnet50_fpn(weights=None, weights_backbone=models.ResNet50_Weights.IMAGENET1K_V1)

import torchvision.models as models
from torchvision.models.detection import fasterrcnn_resnet50_fpn


backbone = models.resnet50(pretrained=True)
detector = fasterrcnn_resnet50_fpn(pretrained=False, pretrained_backbone=True)

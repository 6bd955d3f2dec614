"""TL708 probe: torchvision use in a transfer-learning notebook: `models.resnet50(pretrained=True)`
with `from torchvision import models`, `torchvision.models.vit_b_16(pretrained=False)` fully
qualified, `from torchvision.transforms.v2 import ToTensor` (the import and its use) in a
`Compose`; near misses are `weights=` builders, `weights=None`, v1 `transforms.ToTensor()`,
HF `AutoModel.from_pretrained(...)`, `timm.create_model(..., pretrained=True)`, and a project
function taking its own `pretrained=` flag."""
import timm
import torchvision
from torchvision import models, transforms
from torchvision.models import ResNet50_Weights
from torchvision.transforms.v2 import ToTensor  # expect: TL708
from transformers import AutoModel


def build_backbone(name, pretrained=True):
    if name == "timm_convnext":
        return timm.create_model("convnext_tiny", pretrained=pretrained)  # clean
    return AutoModel.from_pretrained(name)  # clean


# %% models
resnet = models.resnet50(pretrained=True)  # expect: TL708
resnet_v2 = models.resnet50(weights=ResNet50_Weights.IMAGENET1K_V2)  # clean
vit = torchvision.models.vit_b_16(pretrained=False)  # expect: TL708
vit_v2 = torchvision.models.vit_b_16(weights=None)  # clean
backbone = build_backbone("facebook/dinov2-small", pretrained=True)  # clean

# %% transforms
train_tf = transforms.Compose([transforms.RandomResizedCrop(224), ToTensor()])  # expect: TL708
eval_tf = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor()])  # clean

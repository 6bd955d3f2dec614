"""TL708 probe: the deprecated `transforms.v2.ToTensor` imported by name (import and use) and as
`v2.ToTensor()`, against the v1 `transforms.ToTensor` and `v2.ToImage()` + `v2.ToDtype`."""
import torch
from torchvision import transforms
from torchvision.transforms import v2
from torchvision.transforms.v2 import ToTensor  # expect: TL708

train_tf = v2.Compose([
    v2.RandomResizedCrop(224, antialias=True),
    v2.RandomHorizontalFlip(),
    ToTensor(),  # expect: TL708
])
val_tf = v2.Compose([v2.Resize(256, antialias=True), v2.CenterCrop(224), v2.ToTensor()])  # expect: TL708
legacy_tf = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor()])  # clean
modern_tf = v2.Compose([v2.Resize(256, antialias=True), v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])  # clean

import torchvision
from torchvision.models import VGG16_Weights


def perceptual_features():
    vgg = torchvision.models.vgg16(weights=torchvision.models.VGG16_Weights.IMAGENET1K_V1)
    return vgg.features


def classifier(num_classes):
    return torchvision.models.vgg16(weights=VGG16_Weights.DEFAULT, progress=False)

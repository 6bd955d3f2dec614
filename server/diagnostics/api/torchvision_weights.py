"""The weights enum each torchvision model builder takes since torchvision 0.13, for
rewriting `pretrained=True` as `weights=...` (TL708).

Keys are the builder's name under `torchvision.models` (`resnet50`,
`detection.fasterrcnn_resnet50_fpn`); values the enum under the same subpackage and its
default member, and for detection/segmentation builders the backbone's enum.
"""
from __future__ import annotations

_IMAGENET = "IMAGENET1K_V1"


def _classification() -> dict[str, str]:
    names = {
        "alexnet": "AlexNet", "googlenet": "GoogLeNet", "inception_v3": "Inception_V3", "maxvit_t": "MaxVit_T",
        "mobilenet_v2": "MobileNet_V2", "mobilenet_v3_large": "MobileNet_V3_Large",
        "mobilenet_v3_small": "MobileNet_V3_Small", "resnext50_32x4d": "ResNeXt50_32X4D",
        "resnext101_32x8d": "ResNeXt101_32X8D", "resnext101_64x4d": "ResNeXt101_64X4D",
        "wide_resnet50_2": "Wide_ResNet50_2", "wide_resnet101_2": "Wide_ResNet101_2",
    }
    names.update({f"resnet{n}": f"ResNet{n}" for n in (18, 34, 50, 101, 152)})
    names.update({f"densenet{n}": f"DenseNet{n}" for n in (121, 161, 169, 201)})
    names.update({f"vgg{n}{bn}": f"VGG{n}{bn.upper()}" for n in (11, 13, 16, 19) for bn in ("", "_bn")})
    names.update({f"convnext_{s}": f"ConvNeXt_{s.title()}" for s in ("tiny", "small", "base", "large")})
    names.update({f"mnasnet{s}": f"MNASNet{s}" for s in ("0_5", "0_75", "1_0", "1_3")})
    names.update({f"shufflenet_v2_x{s}": f"ShuffleNet_V2_X{s}" for s in ("0_5", "1_0", "1_5", "2_0")})
    names.update({f"squeezenet1_{s}": f"SqueezeNet1_{s}" for s in ("0", "1")})
    names.update({f"efficientnet_b{n}": f"EfficientNet_B{n}" for n in range(8)})
    names.update({f"efficientnet_v2_{s}": f"EfficientNet_V2_{s.upper()}" for s in ("s", "m", "l")})
    names.update({f"swin_{s}": f"Swin_{s.upper()}" for s in ("t", "s", "b")})
    names.update({f"swin_v2_{s}": f"Swin_V2_{s.upper()}" for s in ("t", "s", "b")})
    names.update({f"vit_{s}": f"ViT_{s.upper()}" for s in ("b_16", "b_32", "l_16", "l_32")})
    names.update({f"regnet_{k}_{s}": f"RegNet_{k.upper()}_{s.upper()}"
                  for k, sizes in (("y", ("400mf", "800mf", "1_6gf", "3_2gf", "8gf", "16gf", "32gf")),
                                   ("x", ("400mf", "800mf", "1_6gf", "3_2gf", "8gf", "16gf", "32gf")))
                  for s in sizes})
    return {model: f"{enum}_Weights.{_IMAGENET}" for model, enum in names.items()}


_RESNET50 = "ResNet50_Weights.IMAGENET1K_V1"
_RESNET101 = "ResNet101_Weights.IMAGENET1K_V1"
_MOBILENET = "MobileNet_V3_Large_Weights.IMAGENET1K_V1"

# builder: (its weights, its backbone's weights or None)
WEIGHTS: dict[str, tuple[str, str | None]] = {model: (weights, None) for model, weights in _classification().items()}
WEIGHTS.update({
    "detection.fasterrcnn_resnet50_fpn": ("FasterRCNN_ResNet50_FPN_Weights.COCO_V1", _RESNET50),
    "detection.fasterrcnn_resnet50_fpn_v2": ("FasterRCNN_ResNet50_FPN_V2_Weights.COCO_V1", _RESNET50),
    "detection.fasterrcnn_mobilenet_v3_large_fpn": ("FasterRCNN_MobileNet_V3_Large_FPN_Weights.COCO_V1", _MOBILENET),
    "detection.fasterrcnn_mobilenet_v3_large_320_fpn": ("FasterRCNN_MobileNet_V3_Large_320_FPN_Weights.COCO_V1",
                                                        _MOBILENET),
    "detection.maskrcnn_resnet50_fpn": ("MaskRCNN_ResNet50_FPN_Weights.COCO_V1", _RESNET50),
    "detection.maskrcnn_resnet50_fpn_v2": ("MaskRCNN_ResNet50_FPN_V2_Weights.COCO_V1", _RESNET50),
    "detection.retinanet_resnet50_fpn": ("RetinaNet_ResNet50_FPN_Weights.COCO_V1", _RESNET50),
    "detection.retinanet_resnet50_fpn_v2": ("RetinaNet_ResNet50_FPN_V2_Weights.COCO_V1", _RESNET50),
    "detection.keypointrcnn_resnet50_fpn": ("KeypointRCNN_ResNet50_FPN_Weights.COCO_V1", _RESNET50),
    "detection.fcos_resnet50_fpn": ("FCOS_ResNet50_FPN_Weights.COCO_V1", _RESNET50),
    "detection.ssd300_vgg16": ("SSD300_VGG16_Weights.COCO_V1", "VGG16_Weights.IMAGENET1K_FEATURES"),
    "detection.ssdlite320_mobilenet_v3_large": ("SSDLite320_MobileNet_V3_Large_Weights.COCO_V1", _MOBILENET),
    "segmentation.deeplabv3_resnet50": ("DeepLabV3_ResNet50_Weights.COCO_WITH_VOC_LABELS_V1", _RESNET50),
    "segmentation.deeplabv3_resnet101": ("DeepLabV3_ResNet101_Weights.COCO_WITH_VOC_LABELS_V1", _RESNET101),
    "segmentation.deeplabv3_mobilenet_v3_large": ("DeepLabV3_MobileNet_V3_Large_Weights.COCO_WITH_VOC_LABELS_V1",
                                                  _MOBILENET),
    "segmentation.fcn_resnet50": ("FCN_ResNet50_Weights.COCO_WITH_VOC_LABELS_V1", _RESNET50),
    "segmentation.fcn_resnet101": ("FCN_ResNet101_Weights.COCO_WITH_VOC_LABELS_V1", _RESNET101),
    "segmentation.lraspp_mobilenet_v3_large": ("LRASPP_MobileNet_V3_Large_Weights.COCO_WITH_VOC_LABELS_V1", _MOBILENET),
    "video.r3d_18": ("R3D_18_Weights.KINETICS400_V1", None),
    "video.mc3_18": ("MC3_18_Weights.KINETICS400_V1", None),
    "video.r2plus1d_18": ("R2Plus1D_18_Weights.KINETICS400_V1", None),
    "video.s3d": ("S3D_Weights.KINETICS400_V1", None),
    "video.mvit_v1_b": ("MViT_V1_B_Weights.KINETICS400_V1", None),
    "video.mvit_v2_s": ("MViT_V2_S_Weights.KINETICS400_V1", None),
    "video.swin3d_t": ("Swin3D_T_Weights.KINETICS400_V1", None),
    "video.swin3d_s": ("Swin3D_S_Weights.KINETICS400_V1", None),
    "video.swin3d_b": ("Swin3D_B_Weights.KINETICS400_V1", None),
    "optical_flow.raft_large": ("Raft_Large_Weights.C_T_SKHT_V2", None),
    "optical_flow.raft_small": ("Raft_Small_Weights.C_T_V2", None),
})
# Builders with no default weights for `pretrained=True`.
WEIGHTS.update({"vit_h_14": ("", None), "regnet_y_128gf": ("", None)})

# Modules under `torchvision.models` that hold classification builders (`models.resnet.resnet50`).
CLASSIFICATION_MODULES = ("alexnet", "convnext", "densenet", "efficientnet", "googlenet", "inception", "mnasnet",
                          "mobilenet", "mobilenetv2", "mobilenetv3", "regnet", "resnet", "shufflenetv2", "squeezenet",
                          "vgg", "vision_transformer", "swin_transformer", "maxvit")


def builder_key(qualname: str) -> str | None:
    """`torchvision.models.resnet.resnet50` -> "resnet50", when it is a known builder."""
    prefix = "torchvision.models."
    if not qualname.startswith(prefix):
        return None
    rest = qualname[len(prefix):]
    head, _, tail = rest.partition(".")
    if tail and head in CLASSIFICATION_MODULES:
        rest = tail
    return rest if rest in WEIGHTS else None

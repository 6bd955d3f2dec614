import torch
import torch.nn as nn
import torch.nn.functional as F

tag_criterion = nn.BCEWithLogitsLoss()


def tagger_loss(tag_logits, tag_targets):
    return tag_criterion(torch.sigmoid(tag_logits), tag_targets)


def scene_loss(scene_logits, scene_labels):
    return F.cross_entropy(scene_logits.log_softmax(dim=-1), scene_labels)

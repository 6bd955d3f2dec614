"""TL206 probe: the method form `logits.log_softmax(-1)` into `F.cross_entropy`, and `torch.sigmoid` output
into a functional BCE-with-logits through a name; near misses apply the activation only after the loss,
and use `F.gumbel_softmax` samples as soft targets."""
import torch
import torch.nn as nn
import torch.nn.functional as F

criterion = nn.CrossEntropyLoss()


def step_loss(model, x, y):
    outputs = model(x)
    loss = criterion(outputs, y)  # clean
    outputs = torch.softmax(outputs, dim=1)
    return loss, outputs.argmax(1)


def token_loss(lm_logits, labels):
    return F.cross_entropy(lm_logits.log_softmax(-1).flatten(0, 1), labels.flatten())  # expect: TL206


def relaxed_targets_loss(student_logits, teacher_logits):
    soft = F.gumbel_softmax(teacher_logits, tau=0.5)
    return F.cross_entropy(student_logits, soft)  # clean


def tag_loss(tag_logits, tags):
    probs = torch.sigmoid(tag_logits)
    return F.binary_cross_entropy_with_logits(probs, tags)  # expect: TL206

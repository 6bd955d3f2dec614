"""TL302 probe: HF-style `model(**batch)` evaluation after `model.eval()` and a notebook-style eval loop,
both outside no_grad; near misses run under `inference_mode` (decorator and block) and compute a loss
only with a loss module."""
import torch
from torch import nn
from transformers import AutoModelForTokenClassification

model = AutoModelForTokenClassification.from_pretrained("bert-base-cased", num_labels=9)
eval_batches = torch.load("eval_batches.pt", weights_only=True)


def evaluate(model, loader):
    model.eval()
    losses = []
    for batch in loader:
        outputs = model(**batch)  # expect: TL302
        losses.append(outputs.loss.detach())
    return torch.stack(losses).mean()


@torch.inference_mode()
def evaluate_fixed(model, loader):
    model.eval()
    losses = []
    for batch in loader:
        outputs = model(**batch)  # clean
        losses.append(outputs.loss)
    return torch.stack(losses).mean()


model.eval()
correct = 0
for batch in eval_batches:
    logits = model(**batch).logits  # expect: TL302
    correct += (logits.argmax(-1) == batch["labels"]).sum()

with torch.inference_mode():
    first = model(**eval_batches[0]).logits  # clean

ce = nn.CrossEntropyLoss(ignore_index=-100)


def validation_loss(logits, labels):
    return ce(logits.flatten(0, 1), labels.flatten())  # clean

"""TL103 probe: HF-style `model(**batch)` evaluation of a model passed in, and a `test_*` function, under
no_grad without `.eval()`; near misses switch mode first (on the attribute, or on the model they return) or
run a model straight from `from_pretrained()`, which returns it in eval mode."""
import torch
from transformers import AutoModelForSequenceClassification


class Finetuner:
    def __init__(self, checkpoint, val_loader):
        self.model = AutoModelForSequenceClassification.from_pretrained(checkpoint, num_labels=2)
        self.val_loader = val_loader

    def validate(self):
        correct = total = 0
        with torch.no_grad():
            for batch in self.val_loader:
                out = self.model(**batch)  # clean
                correct += (out.logits.argmax(-1) == batch["labels"]).sum()
                total += batch["labels"].numel()
        return correct / total

    def validate_fixed(self):
        self.model.eval()
        correct = total = 0
        with torch.no_grad():
            for batch in self.val_loader:
                out = self.model(**batch)  # clean
                correct += (out.logits.argmax(-1) == batch["labels"]).sum()
                total += batch["labels"].numel()
        return correct / total


def evaluate_perplexity(model, loader):
    losses = []
    with torch.inference_mode():
        for batch in loader:
            out = model(input_ids=batch["input_ids"], labels=batch["input_ids"])  # expect: TL103
            losses.append(out.loss)
    return torch.exp(torch.stack(losses).mean())


def evaluate_perplexity_fixed(model, loader):
    model.eval()
    losses = []
    with torch.inference_mode():
        for batch in loader:
            out = model(input_ids=batch["input_ids"], labels=batch["input_ids"])  # clean
            losses.append(out.loss)
    return torch.exp(torch.stack(losses).mean())


def load_for_inference(path):
    model = AutoModelForSequenceClassification.from_pretrained(path).eval()
    with torch.no_grad():
        warmup = model(input_ids=torch.ones(1, 8, dtype=torch.long))  # clean
    return model, warmup


def test_intent_accuracy(classifier, batches):
    hits = 0
    with torch.no_grad():
        for batch in batches:
            hits += (classifier(**batch).logits.argmax(-1) == batch["labels"]).sum()  # expect: TL103
    return hits

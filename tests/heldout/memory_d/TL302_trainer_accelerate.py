"""TL302 probe: a trainer class whose `validate()` runs `self.model` after `self.model.eval()` without
no_grad, and an HF-style accelerate loop that evaluates the prepared model after `model.eval()` with grad
on; near misses: the trainer's `test()` decorated with `@torch.no_grad()`, generation through
`model.generate()` (a method, not a forward call) and a `with torch.inference_mode():` evaluation."""
import torch
from torch import nn
import torch.nn.functional as F
from accelerate import Accelerator


class ImageTrainer:
    def __init__(self, model: nn.Module, train_loader, val_loader):
        self.model = model
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def train_epoch(self):
        self.model.train()
        for x, y in self.train_loader:
            self.optimizer.zero_grad(set_to_none=True)
            F.cross_entropy(self.model(x), y).backward()
            self.optimizer.step()

    def validate(self):
        self.model.eval()
        correct = 0
        for x, y in self.val_loader:
            correct += (self.model(x).argmax(1) == y).sum()  # expect: TL302
        return correct

    @torch.no_grad()
    def test(self, loader):
        self.model.eval()
        return sum((self.model(x).argmax(1) == y).sum() for x, y in loader)  # clean


def finetune(model, tokenizer, train_dl, eval_dl, epochs=3):
    accelerator = Accelerator(mixed_precision="bf16", gradient_accumulation_steps=4)
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    model, optimizer, train_dl, eval_dl = accelerator.prepare(model, optimizer, train_dl, eval_dl)
    for epoch in range(epochs):
        model.train()
        for batch in train_dl:
            with accelerator.accumulate(model):
                loss = model(**batch).loss
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()
        model.eval()
        losses = []
        for batch in eval_dl:
            outputs = model(**batch)  # expect: TL302
            losses.append(accelerator.gather_for_metrics(outputs.loss.detach().repeat(batch["input_ids"].size(0))))
        print(epoch, torch.cat(losses).mean())
        sample = model.generate(**tokenizer("Once upon a time", return_tensors="pt"), max_new_tokens=20)  # clean
        print(tokenizer.decode(sample[0]))


def evaluate_inference_mode(model, loader):
    model.eval()
    with torch.inference_mode():
        return sum(F.cross_entropy(model(**b).logits, b["labels"], reduction="sum") for b in loader)  # clean

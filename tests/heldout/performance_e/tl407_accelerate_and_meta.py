"""TL407 probe: an accelerate training loop that clears with `optimizer.zero_grad(set_to_none=False)`,
a meta-learning inner loop that zeros a cloned fast-weight list's gradients with `g.grad.zero_()`
after a null check, and a Lightning-style hook that calls `model.zero_grad(set_to_none=False)`;
near misses zero a momentum buffer, a gradient-accumulation buffer of the trainer (not a
`.grad`), scale gradients in place with `p.grad.mul_(...)`, and fill a mask with ones."""
import torch
from accelerate import Accelerator


def train(model, loader, optimizer, epochs=3):
    accelerator = Accelerator(gradient_accumulation_steps=4)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for epoch in range(epochs):
        for batch in loader:
            with accelerator.accumulate(model):
                loss = model(**batch).loss
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad(set_to_none=False)  # expect: TL407


def inner_adapt(fast_weights, loss_fn, support, steps=5, lr=0.4):
    for _ in range(steps):
        loss = loss_fn(fast_weights, support)
        loss.backward()
        with torch.no_grad():
            for w in fast_weights:
                if w.grad is not None:
                    w -= lr * w.grad
                    w.grad.zero_()  # expect: TL407
    return fast_weights


class LitClassifier:
    def __init__(self, model):
        self.model = model
        self.accum = [torch.zeros_like(p) for p in model.parameters()]
        self.momentum = [torch.zeros_like(p) for p in model.parameters()]

    def on_before_zero_grad(self, optimizer):
        self.model.zero_grad(set_to_none=False)  # expect: TL407

    def reset_buffers(self):
        for buf in self.momentum:
            buf.zero_()  # clean
        for acc in self.accum:
            acc.zero_()  # clean

    def scale_grads(self, factor):
        for p in self.model.parameters():
            if p.grad is not None:
                p.grad.mul_(factor)  # clean

    def keep_mask(self, mask):
        return mask.fill_(1)  # clean

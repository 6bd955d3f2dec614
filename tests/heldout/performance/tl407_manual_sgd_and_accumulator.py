"""TL407 probe: hand-written SGD on leaf tensors clearing `w.grad.zero_()` and
`b.grad.data.zero_()`, against a gradient accumulator class that adds into `.grad` in place
(it needs the zeros: a None gradient would raise)."""
import torch


def fit_linear(X, y, epochs=100, lr=0.1):
    w = torch.zeros(X.shape[1], 1, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    for _ in range(epochs):
        loss = ((X @ w + b - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
            b -= lr * b.grad
        w.grad.zero_()  # expect: TL407
        b.grad.data.zero_()  # expect: TL407
    return w.detach(), b.detach()


class GradAccumulator:
    """Sums per-worker gradients into the local parameters before one optimizer step."""

    def __init__(self, params):
        self.params = [p for p in params if p.requires_grad]
        for p in self.params:
            p.grad = torch.zeros_like(p)

    def add(self, grads):
        for p, g in zip(self.params, grads):
            p.grad.add_(g)

    def reset(self):
        for p in self.params:
            p.grad.zero_()  # clean

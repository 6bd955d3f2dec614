"""TL407 probe: a Lookahead optimizer wrapper whose `zero_grad` implements the `set_to_none`
option (zeros only in the branch where the caller asked for them), against a training helper
that always writes zeros into the slow weights' gradients and a call asking for zeros."""
import torch


class Lookahead(torch.optim.Optimizer):
    def __init__(self, base, k=5, alpha=0.5):
        self.base, self.k, self.alpha = base, k, alpha
        self.param_groups = base.param_groups
        self.state = base.state
        self.defaults = base.defaults
        self.slow = [[p.detach().clone() for p in g["params"]] for g in self.param_groups]
        self.steps = 0

    def zero_grad(self, set_to_none: bool = True):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    if set_to_none:
                        p.grad = None
                    else:
                        p.grad.detach_()
                        p.grad.zero_()  # clean

    @torch.no_grad()
    def step(self, closure=None):
        loss = self.base.step(closure)
        self.steps += 1
        if self.steps % self.k == 0:
            for group, slow in zip(self.param_groups, self.slow):
                for p, q in zip(group["params"], slow):
                    q += self.alpha * (p - q)
                    p.copy_(q)
        return loss


def train(model, loader, epochs=10):
    opt = Lookahead(torch.optim.AdamW(model.parameters(), lr=1e-3))
    model.train()
    for _ in range(epochs):
        for x, y in loader:
            for p in model.parameters():
                if p.grad is not None:
                    p.grad.zero_()  # expect: TL407
            torch.nn.functional.mse_loss(model(x), y).backward()
            opt.step()
    return model


def train_keep_zeros(model, loader, opt):
    model.train()
    for x, y in loader:
        opt.zero_grad(set_to_none=False)  # expect: TL407
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()

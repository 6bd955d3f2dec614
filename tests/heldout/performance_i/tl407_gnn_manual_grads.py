"""TL407 probe: gradients cleared by writing zeros. A link-prediction GNN trainer clearing with
`p.grad.zero_()` over the model's parameters, a recommender loop calling
`optimizer.zero_grad(set_to_none=False)`, and a meta-learning inner loop filling the fast weights'
gradients with `fill_(0)`; near misses are a gradient accumulator class that adds into `.grad` in
place (it needs the zeros: a `None` gradient cannot be added to), an implementation of the
`set_to_none` option itself, and `zero_grad(set_to_none=True)`."""
import torch
import torch.nn.functional as F


def link_prediction_epoch(model, x, edge_index, pos, neg, optimizer):
    model.train()
    for p in model.parameters():
        if p.grad is not None:
            p.grad.zero_()  # expect: TL407
    z = model(x, edge_index)
    pos_score = (z[pos[0]] * z[pos[1]]).sum(-1)
    neg_score = (z[neg[0]] * z[neg[1]]).sum(-1)
    scores = torch.cat([pos_score, neg_score])
    labels = torch.cat([torch.ones_like(pos_score), torch.zeros_like(neg_score)])
    loss = F.binary_cross_entropy_with_logits(scores, labels)
    loss.backward()
    optimizer.step()
    return loss.detach()


def recsys_epoch(model, loader, optimizer, device):
    model.train()
    for users, items, ratings in loader:
        optimizer.zero_grad(set_to_none=False)  # expect: TL407
        pred = model(users.to(device), items.to(device))
        loss = F.mse_loss(pred, ratings.to(device).float())
        loss.backward()
        optimizer.step()


def inner_adapt(fast_weights, support_x, support_y, forward, inner_lr=0.01, steps=5):
    for _ in range(steps):
        for w in fast_weights:
            if w.grad is not None:
                w.grad.data.fill_(0)  # expect: TL407
        loss = F.cross_entropy(forward(support_x, fast_weights), support_y)
        loss.backward()
        with torch.no_grad():
            for w in fast_weights:
                w -= inner_lr * w.grad
    return fast_weights


def clean_epoch(model, loader, optimizer, device):
    model.train()
    for x, y in loader:
        optimizer.zero_grad(set_to_none=True)  # clean
        loss = F.cross_entropy(model(x.to(device)), y.to(device))
        loss.backward()
        optimizer.step()


class GradAccumulator:
    """Sums per-shard gradients computed elsewhere into the model's `.grad` fields."""

    def __init__(self, params):
        self.params = [p for p in params if p.requires_grad]

    def reset(self, set_to_none=False):
        for p in self.params:
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.zero_()  # clean

    def add(self, grads):
        for p, g in zip(self.params, grads):
            if p.grad is None:
                p.grad = torch.zeros_like(p)
            p.grad.add_(g)

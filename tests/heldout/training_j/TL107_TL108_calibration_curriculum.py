"""TL107 and TL108 probe: temperature scaling fitted with Adam inside a `@torch.no_grad()` calibration helper,
a MAML meta-test whose inner adaptation runs under `torch.inference_mode()`, a gradient-checkpointed
block recomputed under `no_grad` before its backward; schedulers stepped before the optimizer in a
curriculum loop, at the top of the epoch of a multi-task loop whose optimizer steps in the nested
batch loop, and for one of two schedulers of a GAN-free two-loss loop. Near misses re-enable grad with
`torch.enable_grad()`, fit the temperature with LBFGS (whose `step` runs the closure under
`enable_grad` itself), backpropagate after leaving the `no_grad` block, step the scheduler after the
optimizer (also per epoch after the batch loop), and step `ReduceLROnPlateau` on the validation loss."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint


@torch.no_grad()
def calibrate_temperature(val_logits, val_labels, iters=50):
    temperature = nn.Parameter(torch.ones(1))
    opt = torch.optim.Adam([temperature], lr=0.01)
    for _ in range(iters):
        opt.zero_grad()
        loss = F.cross_entropy(val_logits / temperature, val_labels)
        loss.backward()  # expect: TL107
        opt.step()
    return temperature.detach()


@torch.no_grad()
def calibrate_temperature_lbfgs(val_logits, val_labels, iters=50):
    temperature = nn.Parameter(torch.ones(1))
    opt = torch.optim.LBFGS([temperature], lr=0.01, max_iter=iters)

    def closure():
        opt.zero_grad()
        loss = F.cross_entropy(val_logits / temperature, val_labels)
        loss.backward()  # clean
        return loss

    opt.step(closure)
    return temperature.detach()


@torch.no_grad()
def calibrate_temperature_enable_grad(val_logits, val_labels, iters=50):
    temperature = nn.Parameter(torch.ones(1))
    opt = torch.optim.Adam([temperature], lr=0.01)
    for _ in range(iters):
        opt.zero_grad()
        with torch.enable_grad():
            loss = F.cross_entropy(val_logits / temperature, val_labels)
            loss.backward()  # clean
        opt.step()
    return temperature.detach()


def meta_test(model, tasks, inner_lr=0.01, steps=5):
    accs = []
    for x_s, y_s, x_q, y_q in tasks:
        learner = type(model)()
        learner.load_state_dict(model.state_dict())
        inner_opt = torch.optim.SGD(learner.parameters(), lr=inner_lr)
        with torch.inference_mode():
            for _ in range(steps):
                inner_opt.zero_grad()
                F.cross_entropy(learner(x_s), y_s).backward()  # expect: TL107
                inner_opt.step()
            learner.eval()
            accs.append((learner(x_q).argmax(-1) == y_q).float().mean())
    return torch.stack(accs).mean()


def meta_test_adapt_with_grad(model, tasks, inner_lr=0.01, steps=5):
    accs = []
    for x_s, y_s, x_q, y_q in tasks:
        learner = type(model)()
        learner.load_state_dict(model.state_dict())
        inner_opt = torch.optim.SGD(learner.parameters(), lr=inner_lr)
        for _ in range(steps):
            inner_opt.zero_grad()
            F.cross_entropy(learner(x_s), y_s).backward()  # clean
            inner_opt.step()
        learner.eval()
        with torch.inference_mode():
            accs.append((learner(x_q).argmax(-1) == y_q).float().mean())
    return torch.stack(accs).mean()


def checkpointed_step(blocks, head, x, y, optimizer):
    optimizer.zero_grad()
    with torch.no_grad():
        h = x
        for block in blocks:
            h = checkpoint(block, h, use_reentrant=False)
        loss = F.cross_entropy(head(h), y)
        loss.backward()  # expect: TL107
    optimizer.step()


def checkpointed_step_outside(blocks, head, x, y, optimizer):
    optimizer.zero_grad()
    h = x
    for block in blocks:
        h = checkpoint(block, h, use_reentrant=False)
    loss = F.cross_entropy(head(h), y)
    loss.backward()  # clean
    optimizer.step()


def curriculum(model, optimizer, scheduler, loaders):
    model.train()
    for loader in loaders:
        for x, y in loader:
            optimizer.zero_grad()
            scheduler.step()  # expect: TL108
            F.cross_entropy(model(x), y).backward()
            optimizer.step()


def curriculum_after(model, optimizer, scheduler, loaders):
    model.train()
    for loader in loaders:
        for x, y in loader:
            optimizer.zero_grad()
            F.cross_entropy(model(x), y).backward()
            optimizer.step()
            scheduler.step()  # clean


def multitask_epochs(model, optimizer, scheduler, seg_loader, depth_loader, epochs=20):
    model.train()
    for epoch in range(epochs):
        scheduler.step()  # expect: TL108
        for (img_s, seg), (img_d, depth) in zip(seg_loader, depth_loader):
            optimizer.zero_grad()
            seg_logits, _ = model(img_s)
            _, depth_pred = model(img_d)
            loss = F.cross_entropy(seg_logits, seg) + F.l1_loss(depth_pred, depth)
            loss.backward()
            optimizer.step()


def multitask_epochs_after(model, optimizer, scheduler, seg_loader, depth_loader, epochs=20):
    model.train()
    for epoch in range(epochs):
        for (img_s, seg), (img_d, depth) in zip(seg_loader, depth_loader):
            optimizer.zero_grad()
            seg_logits, _ = model(img_s)
            _, depth_pred = model(img_d)
            loss = F.cross_entropy(seg_logits, seg) + F.l1_loss(depth_pred, depth)
            loss.backward()
            optimizer.step()
        scheduler.step()  # clean


def two_optimizers(encoder, head, enc_opt, head_opt, enc_sched, head_sched, loader):
    encoder.train()
    head.train()
    for epoch in range(10):
        for x, y in loader:
            enc_opt.zero_grad()
            head_opt.zero_grad()
            F.cross_entropy(head(encoder(x)), y).backward()
            head_sched.step()  # expect: TL108
            head_opt.step()
            enc_opt.step()
            enc_sched.step()  # clean


def fit_with_plateau(model, optimizer, loader, validate, epochs=10):
    plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5, patience=2)
    for epoch in range(epochs):
        model.train()
        for x, y in loader:
            optimizer.zero_grad()
            F.cross_entropy(model(x), y).backward()
            optimizer.step()
        plateau.step(validate(model))  # clean

"""TL107/TL108 probe: a training loop that validates inline every N steps and computes a
gradient-norm diagnostic with `.backward()` while still inside the validation `no_grad` block, an
adversarial-example generator that calls `backward` under `inference_mode`, OneCycle/warmup schedulers
stepped before the optimizer inside an accumulation `if`, a GAN with two schedulers, and a k-fold loop
stepping the plateau scheduler first; near misses re-enable grad with `torch.enable_grad()`, step
the scheduler after the optimizer in both branches, and step an epoch scheduler after the inner loop."""
import torch
import torch.nn.functional as F


def train_with_inline_val(model, loader, val_batch, optimizer, every=500):
    for step, (x, y) in enumerate(loader):
        optimizer.zero_grad(set_to_none=True)
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
        if step % every == 0:
            model.eval()
            with torch.no_grad():
                vx, vy = val_batch
                val_loss = F.cross_entropy(model(vx), vy)
                val_loss.backward()  # expect: TL107
            model.train()


def train_with_inline_val_enable_grad(model, loader, val_batch, optimizer, every=500):
    for step, (x, y) in enumerate(loader):
        optimizer.zero_grad(set_to_none=True)
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
        if step % every == 0:
            model.eval()
            with torch.no_grad():
                vx, vy = val_batch
                print(step, float(F.cross_entropy(model(vx), vy)))
            with torch.enable_grad():
                model.zero_grad(set_to_none=True)
                F.cross_entropy(model(vx), vy).backward()  # clean
                grad_norm = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in model.parameters() if p.grad is not None]))
            model.zero_grad(set_to_none=True)
            model.train()
            print(step, float(grad_norm))


@torch.inference_mode()
def fgsm(model, x, y, eps=8 / 255):
    x = x.clone().requires_grad_(True)
    F.cross_entropy(model(x), y).backward()  # expect: TL107
    return (x + eps * x.grad.sign()).clamp(0, 1)


def fgsm_enabled(model, x, y, eps=8 / 255):
    x = x.clone().requires_grad_(True)
    with torch.enable_grad():
        F.cross_entropy(model(x), y).backward()  # clean
    return (x + eps * x.grad.sign()).clamp(0, 1).detach()


def accumulate_with_onecycle(model, loader, optimizer, total_steps, accum=8):
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=1e-3, total_steps=total_steps)
    for i, (x, y) in enumerate(loader):
        (F.cross_entropy(model(x), y) / accum).backward()
        if (i + 1) % accum == 0:
            scheduler.step()  # expect: TL108
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)


def accumulate_with_onecycle_ordered(model, loader, optimizer, total_steps, accum=8):
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=1e-3, total_steps=total_steps)
    for i, (x, y) in enumerate(loader):
        (F.cross_entropy(model(x), y) / accum).backward()
        if (i + 1) % accum == 0:
            optimizer.step()
            scheduler.step()  # clean
            optimizer.zero_grad(set_to_none=True)


def gan_with_schedulers(gen, disc, opt_g, opt_d, loader, z_dim=64):
    sched_g = torch.optim.lr_scheduler.LinearLR(opt_g, start_factor=0.1, total_iters=1000)
    sched_d = torch.optim.lr_scheduler.LinearLR(opt_d, start_factor=0.1, total_iters=1000)
    for real in loader:
        fake = gen(torch.randn(real.size(0), z_dim, device=real.device))
        opt_d.zero_grad(set_to_none=True)
        (F.softplus(disc(fake.detach())) + F.softplus(-disc(real))).mean().backward()
        sched_d.step()  # expect: TL108
        opt_d.step()
        opt_g.zero_grad(set_to_none=True)
        F.softplus(-disc(fake)).mean().backward()
        opt_g.step()
        sched_g.step()  # clean


def kfold_plateau(folds, make_model, epochs=30):
    for train_loader, val_loss_fn in folds:
        model = make_model()
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, patience=2)
        for epoch in range(epochs):
            for x, y in train_loader:
                optimizer.zero_grad(set_to_none=True)
                F.mse_loss(model(x), y).backward()
                optimizer.step()
            scheduler.step(val_loss_fn(model))  # clean


def warmup_first(model, loader, optimizer, epochs=3):
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / 1000))
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad(set_to_none=True)
            scheduler.step()  # expect: TL108
            F.mse_loss(model(x), y).backward()
            optimizer.step()

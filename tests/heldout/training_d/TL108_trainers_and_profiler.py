"""TL108 probe: a trainer class stepping `self.lr_scheduler` before `self.optimizer` in a `while` loop over
global steps, a k-fold loop that steps a `LinearLR` warm-up at the top of every batch, and a DDP loop that
steps the OneCycle schedule before `scaler.step(optimizer)` inside the accumulation branch; near misses
step `torch.profiler`'s `prof.step()` and an EMA helper's `ema.step()` before the optimizer, a
`ReduceLROnPlateau` stepped with the validation loss after the epoch, and the schedule after the step."""
import torch
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.optim.lr_scheduler import LinearLR, OneCycleLR, ReduceLROnPlateau


class StepTrainer:
    def __init__(self, model, loader, max_steps=10_000, warmup=500):
        self.model = model
        self.loader = loader
        self.max_steps = max_steps
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.1)
        self.lr_scheduler = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer, lambda s: min(1.0, (s + 1) / warmup))

    def train(self):
        self.model.train()
        step, it = 0, iter(self.loader)
        while step < self.max_steps:
            try:
                batch = next(it)
            except StopIteration:
                it = iter(self.loader)
                batch = next(it)
            loss = self.model(**batch).loss
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            self.lr_scheduler.step()  # expect: TL108
            self.optimizer.step()
            step += 1


def kfold_train(make_model, fold_loaders, epochs=5):
    for train_loader in fold_loaders:
        model = make_model()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        warmup = LinearLR(optimizer, start_factor=0.01, total_iters=200)
        model.train()
        for epoch in range(epochs):
            for x, y in train_loader:
                warmup.step()  # expect: TL108
                optimizer.zero_grad(set_to_none=True)
                F.cross_entropy(model(x), y).backward()
                optimizer.step()


def ddp_train(model, loader, local_rank, epochs=3, accum=4):
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scheduler = OneCycleLR(optimizer, max_lr=1e-3, total_steps=epochs * len(loader) // accum)
    scaler = torch.amp.GradScaler("cuda")
    model.train()
    for epoch in range(epochs):
        loader.sampler.set_epoch(epoch)
        for i, (x, y) in enumerate(loader):
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = F.mse_loss(model(x), y) / accum
            scaler.scale(loss).backward()
            if (i + 1) % accum == 0:
                scheduler.step()  # expect: TL108
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad(set_to_none=True)


def profiled_train(model, loader, optimizer, ema, val_fn, epochs=3):
    scheduler = ReduceLROnPlateau(optimizer, mode="min", patience=2)
    with torch.profiler.profile(schedule=torch.profiler.schedule(wait=1, warmup=1, active=3)) as prof:
        for epoch in range(epochs):
            model.train()
            for x, y in loader:
                prof.step()  # clean
                ema.step()  # clean
                optimizer.zero_grad(set_to_none=True)
                F.cross_entropy(model(x), y).backward()
                optimizer.step()
            scheduler.step(val_fn(model))  # clean


def onecycle_after(model, loader, optimizer, scheduler):
    model.train()
    for x, y in loader:
        optimizer.zero_grad(set_to_none=True)
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
        scheduler.step()  # clean

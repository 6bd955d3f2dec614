"""TL402 probe: module moves inside loops. A k-fold tabular script that moves the loss module to
the device every batch, a trainer class whose epoch loop re-moves `self.model` every epoch, and a
distillation loop under FSDP that moves the frozen teacher every step; near misses are a model
built anew for each fold and moved once there (it cannot be hoisted), a teacher offloaded to the CPU
after its forward and brought back before the next (the same loop moves it both ways on purpose),
a benchmark moving the model to each device it times, and data batches moved to the device."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from sklearn.model_selection import KFold
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


def make_mlp(n_features, n_classes):
    return nn.Sequential(nn.Linear(n_features, 256), nn.ReLU(), nn.Linear(256, n_classes))


def kfold_train(X, y, class_weights, device, folds=5, epochs=10, bs=512):
    criterion = nn.CrossEntropyLoss(weight=class_weights)
    scores = []
    for fold, (tr, va) in enumerate(KFold(folds, shuffle=True, random_state=0).split(X)):
        model = make_mlp(X.shape[1], int(y.max()) + 1)
        model.to(device)  # clean
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        Xtr, ytr = X[tr], y[tr]
        for epoch in range(epochs):
            model.train()
            for i in range(0, len(tr), bs):
                xb, yb = Xtr[i:i + bs].to(device), ytr[i:i + bs].to(device)  # clean
                criterion.to(device)  # expect: TL402
                loss = criterion(model(xb), yb)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
        model.eval()
        with torch.no_grad():
            acc = (model(X[va].to(device)).argmax(1).cpu() == y[va]).float().mean()  # clean
        scores.append(acc)
    return torch.stack(scores)


class Trainer:
    def __init__(self, model, optimizer, loader, device):
        self.model = model
        self.optimizer = optimizer
        self.loader = loader
        self.device = device

    def fit(self, epochs):
        for epoch in range(epochs):
            self.model.to(self.device)  # expect: TL402
            self.model.train()
            for x, y in self.loader:
                loss = F.cross_entropy(self.model(x.to(self.device)), y.to(self.device))
                self.optimizer.zero_grad(set_to_none=True)
                loss.backward()
                self.optimizer.step()


def setup_distributed():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return local_rank, torch.device("cuda", local_rank)


def kd_loss(student_logits, teacher_logits):
    return F.kl_div(F.log_softmax(student_logits, -1), F.log_softmax(teacher_logits, -1), log_target=True, reduction="batchmean")


def distill_fsdp(student, teacher, loader, steps):
    local_rank, device = setup_distributed()
    student = FSDP(student, device_id=local_rank)
    teacher.eval()
    opt = torch.optim.AdamW(student.parameters(), lr=1e-4)
    for step, (x, _) in enumerate(loader):
        if step >= steps:
            break
        x = x.to(device, non_blocking=True)
        teacher.to(device)  # expect: TL402
        with torch.no_grad():
            t_logits = teacher(x)
        loss = kd_loss(student(x), t_logits)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    dist.destroy_process_group()


def distill_offloaded(student, teacher, loader, steps):
    local_rank, device = setup_distributed()
    student = FSDP(student, device_id=local_rank)
    teacher.eval()
    opt = torch.optim.AdamW(student.parameters(), lr=1e-4)
    for step, (x, _) in enumerate(loader):
        if step >= steps:
            break
        x = x.to(device, non_blocking=True)
        teacher.to(device)  # clean
        with torch.no_grad():
            t_logits = teacher(x)
        teacher.cpu()  # clean
        loss = kd_loss(student(x), t_logits)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    dist.destroy_process_group()


@torch.no_grad()
def latency(model, x, devices=("cpu", "cuda")):
    model.eval()
    out = {}
    for dev in devices:
        model.to(dev)  # clean
        out[dev] = model(x.to(dev)).shape
    return out

"""TL108 probe: the pre-1.1 pattern (scheduler stepped at the top of the epoch loop, the optimizer in the
inner loop) and a cyclic scheduler in a trainer method; near misses step the scheduler after the inner
loop, or step a `torch.optim.swa_utils.SWALR` after the optimizer."""
import torch
import torch.nn.functional as F


def train_legacy(model, loader, epochs):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[30, 60], gamma=0.1)
    for epoch in range(epochs):
        scheduler.step()  # expect: TL108
        model.train()
        for x, y in loader:
            optimizer.zero_grad()
            F.cross_entropy(model(x), y).backward()
            optimizer.step()


class CyclicTrainer:
    def __init__(self, model, loader):
        self.model = model
        self.loader = loader
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        self.lr_scheduler = torch.optim.lr_scheduler.CyclicLR(self.optimizer, 1e-4, 1e-2)

    def epoch(self):
        self.model.train()
        for x, y in self.loader:
            self.optimizer.zero_grad()
            F.cross_entropy(self.model(x), y).backward()
            self.lr_scheduler.step()  # expect: TL108
            self.optimizer.step()


def train_swa(model, loader, epochs, swa_start=10):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    swa_model = torch.optim.swa_utils.AveragedModel(model)
    swa_scheduler = torch.optim.swa_utils.SWALR(optimizer, swa_lr=0.05)
    for epoch in range(epochs):
        model.train()
        for x, y in loader:
            optimizer.zero_grad()
            F.cross_entropy(model(x), y).backward()
            optimizer.step()
        if epoch >= swa_start:
            swa_model.update_parameters(model)
            swa_scheduler.step()  # clean

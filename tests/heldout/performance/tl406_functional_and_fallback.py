"""TL406 probe: the functional `nn.parallel.data_parallel` in a training step and a
`torch.nn.DataParallel(...)` built in a trainer's setup, against DP as the fallback branch
beside DistributedDataParallel."""
import torch
import torch.nn as nn
from torch.nn.parallel import data_parallel


def train_step(model, batch, optimizer, device_ids):
    x, y = batch
    logits = data_parallel(model, x.cuda(device_ids[0]), device_ids=device_ids)  # expect: TL406
    loss = nn.functional.cross_entropy(logits, y.cuda(device_ids[0]))
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    return loss.detach()


class Trainer:
    def __init__(self, model, lr=0.1):
        self.model = torch.nn.DataParallel(model).cuda()  # expect: TL406
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=lr, momentum=0.9)

    def fit(self, loader, epochs):
        for _ in range(epochs):
            self.model.train()
            for x, y in loader:
                loss = nn.functional.cross_entropy(self.model(x.cuda()), y.cuda())
                self.optimizer.zero_grad(set_to_none=True)
                loss.backward()
                self.optimizer.step()


def parallelize(model, use_ddp, local_rank=0):
    if use_ddp:
        return nn.parallel.DistributedDataParallel(model.cuda(local_rank), device_ids=[local_rank])
    else:
        return nn.DataParallel(model.cuda())  # clean

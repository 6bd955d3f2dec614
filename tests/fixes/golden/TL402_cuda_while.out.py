import torch
import torch.nn.functional as F


def finetune(model, batches, optimizer, steps):
    step = 0
    model.cuda()
    while step < steps:
        x, y = next(batches)
        loss = F.cross_entropy(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        step += 1

"""TL402 probe: a GPU inference worker that moves its model to the device on every request
(`self.model.to(self.device)` in a `while True:` queue loop), and a fine-tuning loop that moves
its loss module with `.cuda()` inside the batch loop; near misses move the request tensors and
a dict of batch tensors, move each model of a model zoo once while loading it (a loop over
names: every module moved exactly once), and `model.to(memory_format=...)` done once before."""
import queue

import torch
import torch.nn as nn


class Worker:
    def __init__(self, model, device="cuda"):
        self.model = model.eval()
        self.device = torch.device(device)
        self.jobs = queue.Queue()

    def serve(self):
        while True:
            job = self.jobs.get()
            if job is None:
                break
            self.model.to(self.device)  # expect: TL402
            with torch.inference_mode():
                pixels = job["pixels"].to(self.device, non_blocking=True)  # clean
                job["future"].set_result(self.model(pixels).argmax(-1).cpu())


def load_zoo(names, builders, device):
    zoo = {}
    for name in names:
        zoo[name] = builders[name]().to(device).eval()  # clean
    return zoo


def finetune(model, loader, optimizer, epochs=3):
    model = model.cuda().to(memory_format=torch.channels_last)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    for epoch in range(epochs):
        for batch in loader:
            batch = {k: v.cuda(non_blocking=True) for k, v in batch.items()}  # clean
            criterion.cuda()  # expect: TL402
            loss = criterion(model(batch["pixels"]), batch["labels"])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()

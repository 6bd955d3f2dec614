"""TL105 probe: an accelerate fine-tuning script that takes its device from `accelerator.device` and
still builds a class-weight tensor with `device="cuda"` and moves a metric buffer with `.cuda()`; near
misses use the device variable, `accelerator.prepare` (which places the model itself), a Fabric helper
whose `fabric.to_device` does the move, and a benchmark helper run once on `"cpu"` and once on `"cuda"`."""
import time

import torch
import torch.nn.functional as F
from accelerate import Accelerator


def finetune(model, train_dl, class_counts, epochs=3):
    accelerator = Accelerator(mixed_precision="fp16")
    device = accelerator.device  # clean
    weights = torch.tensor([1.0 / c for c in class_counts], device="cuda")  # expect: TL105
    confusion = torch.zeros(len(class_counts), len(class_counts), dtype=torch.long).cuda()  # expect: TL105
    prior = torch.tensor(class_counts, dtype=torch.float32, device=device)  # clean
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-5)
    model, optimizer, train_dl = accelerator.prepare(model, optimizer, train_dl)  # clean
    for epoch in range(epochs):
        model.train()
        for batch in train_dl:
            logits = model(batch["pixel_values"]).logits + prior.log()
            loss = F.cross_entropy(logits, batch["labels"], weight=weights)
            optimizer.zero_grad(set_to_none=True)
            accelerator.backward(loss)
            optimizer.step()
            pred = logits.argmax(-1)
            confusion.index_put_((batch["labels"], pred), torch.ones_like(pred), accumulate=True)
    return confusion


def fabric_prior(fabric, class_counts):
    prior = torch.tensor(class_counts, dtype=torch.float32)
    return fabric.to_device(prior)  # clean


def time_forward(model, x, device="cpu", repeats=20):
    model = model.to(device)
    x = x.to(device)
    start = time.perf_counter()
    with torch.inference_mode():
        for _ in range(repeats):
            model(x)
    return (time.perf_counter() - start) / repeats


def compare(model, x):
    return time_forward(model, x, device="cpu"), time_forward(model, x, device="cuda")  # clean

"""TL401 probe: per-step host syncs in an accelerate fine-tuning loop (a running `loss.item()`
sum and a per-step accuracy `.item()`), against a periodic log line, a NaN guard that stops
training, and reads after the loop."""
import math
import sys

import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification, get_linear_schedule_with_warmup


def fine_tune(train_ds, epochs=3, lr=2e-5, log_every=50):
    accelerator = Accelerator(mixed_precision="bf16")
    model = AutoModelForSequenceClassification.from_pretrained("distilroberta-base", num_labels=4)
    loader = DataLoader(train_ds, batch_size=32, shuffle=True, num_workers=4, pin_memory=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    scheduler = get_linear_schedule_with_warmup(optimizer, 100, epochs * len(loader))
    model, optimizer, loader, scheduler = accelerator.prepare(model, optimizer, loader, scheduler)
    for epoch in range(epochs):
        model.train()
        epoch_loss, correct, seen = 0.0, 0, 0
        for step, batch in enumerate(loader):
            outputs = model(**batch)
            loss_value = outputs.loss.item()  # clean
            if not math.isfinite(loss_value):
                accelerator.print(f"non-finite loss {loss_value} at step {step}, stopping")
                sys.exit(1)
            accelerator.backward(outputs.loss)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            epoch_loss += outputs.loss.item()  # expect: TL401
            correct += (outputs.logits.argmax(dim=-1) == batch["labels"]).sum().item()  # expect: TL401
            seen += batch["labels"].numel()
            if step % log_every == 0:
                accelerator.print(f"epoch {epoch} step {step} loss {outputs.loss.item():.4f}")  # clean
        accelerator.print(f"epoch {epoch}: loss {epoch_loss / len(loader):.4f} acc {correct / max(seen, 1):.3f}")
    return model

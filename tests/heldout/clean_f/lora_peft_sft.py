"""Clean: supervised fine-tuning of a causal LM with peft LoRA adapters, bf16 autocast, gradient
accumulation with a warm-up schedule stepped after the optimizer, periodic validation under
`torch.no_grad()` with the model switched back to train mode, and a checkpoint of the adapter weights."""
import math
import os

import torch
import torch.nn.functional as F
from peft import LoraConfig, get_peft_model
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM, get_linear_schedule_with_warmup


def evaluate(model, loader, device):
    model.eval()
    total, count = torch.zeros((), device=device), 0
    with torch.no_grad():
        for batch in loader:
            batch = {k: v.to(device) for k, v in batch.items()}
            total += model(**batch).loss.float()
            count += 1
    model.train()
    return math.exp(total.item() / max(count, 1))


def main(train_set, val_set, out_dir="lora-out", epochs=2, accum=8, log_every=50):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    base = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=torch.bfloat16)
    model = get_peft_model(base, LoraConfig(r=16, lora_alpha=32, lora_dropout=0.05, target_modules=["c_attn"]))
    model.to(device)
    train_loader = DataLoader(train_set, batch_size=8, shuffle=True, num_workers=4, pin_memory=True)
    val_loader = DataLoader(val_set, batch_size=16, num_workers=4, pin_memory=True)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=2e-4, weight_decay=0.0)
    total_steps = epochs * math.ceil(len(train_loader) / accum)
    scheduler = get_linear_schedule_with_warmup(optimizer, int(0.05 * total_steps), total_steps)
    model.train()
    step = 0
    for epoch in range(epochs):
        for i, batch in enumerate(train_loader):
            batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
            with torch.autocast(device.type, dtype=torch.bfloat16):
                loss = model(**batch).loss / accum
            loss.backward()
            if (i + 1) % accum == 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad(set_to_none=True)
                step += 1
                if step % log_every == 0:
                    print(f"step {step} loss {loss.item() * accum:.4f} ppl {evaluate(model, val_loader, device):.2f}")
        model.save_pretrained(os.path.join(out_dir, f"epoch{epoch}"))

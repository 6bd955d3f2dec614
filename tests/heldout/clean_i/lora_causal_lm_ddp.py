"""Fine-tune a causal LM with hand-written LoRA adapters under DDP (launch with torchrun)."""
import math
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.checkpoint import checkpoint
from torch.utils.data import DataLoader, DistributedSampler
from transformers import AutoModelForCausalLM


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, r=16, alpha=32, dropout=0.05):
        super().__init__()
        self.base = base
        self.lora_a = nn.Linear(base.in_features, r, bias=False)
        self.lora_b = nn.Linear(r, base.out_features, bias=False)
        self.drop = nn.Dropout(dropout)
        self.scaling = alpha / r
        nn.init.kaiming_uniform_(self.lora_a.weight, a=math.sqrt(5))
        nn.init.zeros_(self.lora_b.weight)

    def forward(self, x):
        return self.base(x) + self.lora_b(self.lora_a(self.drop(x))) * self.scaling


def add_adapters(model, targets=("q_proj", "v_proj")):
    for p in model.parameters():
        p.requires_grad_(False)
    for module in list(model.modules()):
        for name, child in list(module.named_children()):
            if isinstance(child, nn.Linear) and name in targets:
                setattr(module, name, LoRALinear(child))
    return model


def adapter_state(model):
    return {k: v.detach().cpu() for k, v in model.state_dict().items() if "lora_" in k}


def causal_lm_loss(logits, labels):
    shift_logits = logits[:, :-1].reshape(-1, logits.size(-1))
    shift_labels = labels[:, 1:].reshape(-1)
    return F.cross_entropy(shift_logits.float(), shift_labels, ignore_index=-100)


def train(dataset, model_name, epochs=3, lr=2e-4, accum=4, log_every=20):
    dist.init_process_group("nccl")
    rank, local_rank = dist.get_rank(), int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)

    model = add_adapters(AutoModelForCausalLM.from_pretrained(model_name, torch_dtype=torch.bfloat16)).to(device)
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model = DDP(model, device_ids=[local_rank])
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=lr, weight_decay=0.0)
    sampler = DistributedSampler(dataset, shuffle=True)
    loader = DataLoader(dataset, batch_size=8, sampler=sampler, num_workers=4, pin_memory=True, drop_last=True)
    total = epochs * len(loader) // accum
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / 100) * max(0.0, 1 - s / total))

    step = 0
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        model.train()
        optimizer.zero_grad(set_to_none=True)
        for i, batch in enumerate(loader):
            ids = batch["input_ids"].to(device, non_blocking=True)
            labels = batch["labels"].to(device, non_blocking=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = causal_lm_loss(model(input_ids=ids).logits, labels) / accum
            loss.backward()
            if (i + 1) % accum == 0:
                nn.utils.clip_grad_norm_(params, 1.0)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad(set_to_none=True)
                step += 1
                if rank == 0 and step % log_every == 0:
                    print(f"epoch {epoch} step {step} loss {loss.item() * accum:.4f} lr {scheduler.get_last_lr()[0]:.2e}")
        if rank == 0:
            torch.save(adapter_state(model.module), f"adapter_epoch{epoch}.pt")
    dist.destroy_process_group()


def block_forward(block, x, use_ckpt):
    return checkpoint(block, x, use_reentrant=False) if use_ckpt else block(x)

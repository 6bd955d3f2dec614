# %% [markdown]
# LoRA fine-tuning of a small causal LM, written by hand (no PEFT), exported from a notebook.
# TL408 probe: anomaly detection switched on in a cell at the top and a `detect_anomaly()` block
# around the training step, both left in a file that trains; near misses are
# `set_detect_anomaly(False)`, and anomaly detection behind a debug flag.
# %%
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import AutoModelForCausalLM, AutoTokenizer

DEBUG = os.environ.get("DEBUG_NAN") == "1"
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.autograd.set_detect_anomaly(True)  # expect: TL408

# %%
class LoRA(nn.Module):
    def __init__(self, base, r=8, alpha=16):
        super().__init__()
        self.base = base
        self.A = nn.Parameter(torch.randn(r, base.in_features) / math.sqrt(r))
        self.B = nn.Parameter(torch.zeros(base.out_features, r))
        self.scale = alpha / r

    def forward(self, x):
        return self.base(x) + F.linear(F.linear(x, self.A), self.B) * self.scale


tok = AutoTokenizer.from_pretrained("facebook/opt-125m")
model = AutoModelForCausalLM.from_pretrained("facebook/opt-125m")
for p in model.parameters():
    p.requires_grad_(False)
for layer in model.model.decoder.layers:
    layer.self_attn.q_proj = LoRA(layer.self_attn.q_proj)
    layer.self_attn.v_proj = LoRA(layer.self_attn.v_proj)
model.to(device)
model.train()

# %%
texts = ["The quick brown fox jumps over the lazy dog."] * 64
enc = tok(texts, return_tensors="pt")
ids = enc["input_ids"].to(device)
opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=2e-4)

# %%
for step in range(200):
    batch = ids[(step * 8) % 64:(step * 8) % 64 + 8]
    with torch.autograd.detect_anomaly():  # expect: TL408
        out = model(batch, labels=batch)
        opt.zero_grad(set_to_none=True)
        out.loss.backward()
    opt.step()

# %%
torch.autograd.set_detect_anomaly(False)  # clean
if DEBUG:
    torch.autograd.set_detect_anomaly(True)  # clean
for step in range(200):
    batch = ids[(step * 8) % 64:(step * 8) % 64 + 8]
    out = model(batch, labels=batch)
    opt.zero_grad(set_to_none=True)
    out.loss.backward()
    opt.step()

"""TL105 probe: an FSDP speech-recognition script that builds `device = torch.device(f"cuda:{rank}")`
from the local rank and then still moves the CTC targets with `.cuda()`, allocates a spec-augment mask
with `device="cuda"` and moves the loss module with `.to("cuda")`; near misses build the device
variable itself with `torch.device("cuda", rank)`, pick `"cuda" if available else "cpu"`, and move
everything else with `.to(device)` / `device=device`."""
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


class Conformerish(nn.Module):
    def __init__(self, n_mels=80, dim=256, vocab=32):
        super().__init__()
        self.subsample = nn.Conv1d(n_mels, dim, kernel_size=3, stride=2, padding=1)
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(dim, 4, batch_first=True), 6)
        self.head = nn.Linear(dim, vocab)

    def forward(self, mels):
        h = self.subsample(mels).transpose(1, 2)
        return self.head(self.encoder(h)).log_softmax(-1)


def main(loader, epochs=30):
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    device = torch.device(f"cuda:{rank}")
    model = FSDP(Conformerish().to(device), device_id=rank)
    ctc = nn.CTCLoss(blank=0, zero_infinity=True).to("cuda")  # expect: TL105
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)
    for epoch in range(epochs):
        model.train()
        for mels, targets, mel_lens, tgt_lens in loader:
            mels = mels.to(device, non_blocking=True)
            targets = targets.cuda(non_blocking=True)  # expect: TL105
            keep = torch.rand(mels.shape[0], 1, mels.shape[2], device="cuda") > 0.05  # expect: TL105
            log_probs = model(mels * keep)
            loss = ctc(log_probs.transpose(0, 1), targets, (mel_lens + 1) // 2, tgt_lens)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


def main_consistent(loader, epochs=30):
    rank = int(os.environ.get("LOCAL_RANK", 0))
    device = torch.device("cuda", rank)  # clean
    fallback = torch.device("cuda" if torch.cuda.is_available() else "cpu")  # clean
    model = Conformerish().to(device)
    ctc = nn.CTCLoss(blank=0).to(device)  # clean
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)
    for mels, targets, mel_lens, tgt_lens in loader:
        mels, targets = mels.to(device), targets.to(device)  # clean
        keep = torch.rand(mels.shape[0], 1, mels.shape[2], device=device) > 0.05  # clean
        loss = ctc(model(mels * keep).transpose(0, 1), targets, (mel_lens + 1) // 2, tgt_lens)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return fallback

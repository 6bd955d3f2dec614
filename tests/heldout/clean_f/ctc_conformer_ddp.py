"""Clean: DDP training of a small CTC acoustic model under AMP with a GradScaler: one device variable
for everything, the CTC loss computed in float32 on log-probabilities, a OneCycle schedule stepped after
`scaler.step`, running loss kept as a detached tensor, and greedy decoding in an evaluation helper that
switches to eval mode under `torch.inference_mode()`."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


class AcousticModel(nn.Module):
    def __init__(self, n_mels=80, dim=256, vocab=29):
        super().__init__()
        self.subsample = nn.Sequential(
            nn.Conv1d(n_mels, dim, kernel_size=3, stride=2, padding=1), nn.GELU(),
            nn.Conv1d(dim, dim, kernel_size=3, stride=2, padding=1), nn.GELU(),
        )
        self.encoder = nn.LSTM(dim, dim, num_layers=3, batch_first=True, bidirectional=True, dropout=0.1)
        self.head = nn.Linear(2 * dim, vocab)

    def forward(self, mels):
        h = self.subsample(mels).transpose(1, 2)
        h, _ = self.encoder(h)
        return self.head(h).log_softmax(dim=-1)


@torch.inference_mode()
def greedy_decode(model, loader, device, blank=0):
    model.eval()
    hyps = []
    for mels, _, _, _ in loader:
        best = model(mels.to(device)).argmax(-1)
        for seq in best:
            seq = torch.unique_consecutive(seq)
            hyps.append(seq[seq != blank].tolist())
    return hyps


def main(train_set, val_set, epochs=50):
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", rank)
    torch.cuda.set_device(device)
    model = DDP(AcousticModel().to(device), device_ids=[rank])
    ctc = nn.CTCLoss(blank=0, zero_infinity=True)
    sampler = DistributedSampler(train_set)
    loader = DataLoader(train_set, batch_size=32, sampler=sampler, num_workers=8, pin_memory=True)
    val_loader = DataLoader(val_set, batch_size=32, num_workers=4, pin_memory=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=1e-3, total_steps=epochs * len(loader))
    scaler = torch.amp.GradScaler("cuda")
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        model.train()
        running = torch.zeros((), device=device)
        for mels, targets, mel_lens, tgt_lens in loader:
            mels, targets = mels.to(device, non_blocking=True), targets.to(device, non_blocking=True)
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.float16):
                log_probs = model(mels)
            loss = ctc(log_probs.float().transpose(0, 1), targets, (mel_lens + 3) // 4, tgt_lens)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            running += loss.detach()
        if rank == 0:
            print(epoch, running.item() / len(loader), len(greedy_decode(model.module, val_loader, device)))
    dist.destroy_process_group()

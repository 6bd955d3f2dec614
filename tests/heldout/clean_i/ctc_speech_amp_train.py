"""Train a small CTC speech recogniser on log-mel features with mixed precision."""
import argparse
import math
import sys
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchaudio
from torch.utils.data import DataLoader, Dataset


class SpeechCommands(Dataset):
    def __init__(self, root, vocab, split="train"):
        self.items = sorted(Path(root, split).glob("*.pt"))
        self.vocab = vocab
        self.mel = torchaudio.transforms.MelSpectrogram(16000, n_fft=400, hop_length=160, n_mels=80)

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        blob = torch.load(self.items[i], weights_only=True)
        feats = torch.log(self.mel(blob["wav"]) + 1e-6).transpose(0, 1)
        target = torch.tensor([self.vocab[c] for c in blob["text"]], dtype=torch.long)
        return feats, target


def collate(batch):
    feats, targets = zip(*batch)
    feat_lens = torch.tensor([f.size(0) for f in feats])
    target_lens = torch.tensor([t.size(0) for t in targets])
    feats = nn.utils.rnn.pad_sequence(feats, batch_first=True)
    return feats, torch.cat(targets), feat_lens, target_lens


class Recogniser(nn.Module):
    def __init__(self, n_mels, hidden, vocab_size):
        super().__init__()
        self.subsample = nn.Conv1d(n_mels, hidden, kernel_size=3, stride=2, padding=1)
        self.rnn = nn.GRU(hidden, hidden, num_layers=3, batch_first=True, bidirectional=True, dropout=0.1)
        self.out = nn.Linear(2 * hidden, vocab_size)

    def forward(self, feats):
        x = F.gelu(self.subsample(feats.transpose(1, 2))).transpose(1, 2)
        x, _ = self.rnn(x)
        return self.out(x).log_softmax(dim=-1)


def out_lengths(feat_lens):
    return (feat_lens + 1) // 2


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    total, count = 0.0, 0
    for feats, targets, feat_lens, target_lens in loader:
        log_probs = model(feats.to(device, non_blocking=True)).transpose(0, 1).float()
        loss = F.ctc_loss(log_probs, targets.to(device), out_lengths(feat_lens), target_lens, zero_infinity=True,
                          reduction="sum")
        total += loss.item()
        count += feats.size(0)
    return total / max(count, 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--log-every", type=int, default=50)
    args = ap.parse_args()

    vocab = {c: i + 1 for i, c in enumerate("abcdefghijklmnopqrstuvwxyz' ")}
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_loader = DataLoader(SpeechCommands(args.root, vocab), batch_size=32, shuffle=True, num_workers=8,
                              pin_memory=True, collate_fn=collate, drop_last=True)
    val_loader = DataLoader(SpeechCommands(args.root, vocab, "val"), batch_size=64, num_workers=4,
                            pin_memory=True, collate_fn=collate)

    model = Recogniser(80, 256, len(vocab) + 1).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-2)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=1e-3, total_steps=args.epochs * len(train_loader))
    scaler = torch.amp.GradScaler(device.type, enabled=device.type == "cuda")

    step = 0
    for epoch in range(args.epochs):
        model.train()
        for feats, targets, feat_lens, target_lens in train_loader:
            feats, targets = feats.to(device, non_blocking=True), targets.to(device, non_blocking=True)
            with torch.autocast(device.type, dtype=torch.float16, enabled=device.type == "cuda"):
                log_probs = model(feats)
            loss = F.ctc_loss(log_probs.transpose(0, 1).float(), targets, out_lengths(feat_lens), target_lens,
                              zero_infinity=True)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            if step % args.log_every == 0:
                value = loss.item()
                if not math.isfinite(value):
                    sys.exit(f"non-finite loss at step {step}")
                print(f"epoch {epoch} step {step} ctc {value:.3f}")
            step += 1
        print(f"epoch {epoch} val ctc {evaluate(model, val_loader, device):.3f}")
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}, "ctc.pt")


if __name__ == "__main__":
    main()

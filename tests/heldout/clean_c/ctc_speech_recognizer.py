"""Clean script: a small convolutional + BiLSTM speech recognizer trained with CTC on log-mel
features: argparse, a module logger, a padded-batch collate function returning lengths,
`pack_padded_sequence`, AMP with `torch.amp.GradScaler`, gradient clipping after `unscale_`,
a OneCycle schedule stepped per batch, greedy CTC decoding under `torch.inference_mode()` for
a character error rate, and resumable checkpoints loaded with `weights_only=True`.
No rule may fire."""
import argparse
import logging
import math
import os
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence
from torch.utils.data import DataLoader, Dataset

logger = logging.getLogger("asr")
BLANK = 0
ALPHABET = "_ abcdefghijklmnopqrstuvwxyz'"


class FeatureDataset(Dataset):
    """Precomputed (n_mels, frames) features and their transcripts, one `.pt` per utterance."""

    def __init__(self, root: Path):
        self.files = sorted(root.glob("*.pt"))

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        item = torch.load(self.files[i], map_location="cpu", weights_only=True)
        tokens = torch.tensor([ALPHABET.index(c) for c in item["text"].lower() if c in ALPHABET], dtype=torch.long)
        return item["features"].transpose(0, 1), tokens


def collate(batch):
    feats, tokens = zip(*batch)
    feat_lens = torch.tensor([f.size(0) for f in feats])
    token_lens = torch.tensor([t.size(0) for t in tokens])
    return pad_sequence(feats, batch_first=True), feat_lens, torch.cat(tokens), token_lens


class Recognizer(nn.Module):
    def __init__(self, n_mels=80, channels=256, hidden=320, layers=3, vocab=len(ALPHABET), dropout=0.2):
        super().__init__()
        self.subsample = nn.Sequential(
            nn.Conv1d(n_mels, channels, kernel_size=5, stride=2, padding=2), nn.BatchNorm1d(channels), nn.GELU(),
            nn.Conv1d(channels, channels, kernel_size=5, stride=2, padding=2), nn.BatchNorm1d(channels), nn.GELU(),
        )
        self.rnn = nn.LSTM(channels, hidden, num_layers=layers, batch_first=True, bidirectional=True,
                           dropout=dropout)
        self.classifier = nn.Linear(2 * hidden, vocab)

    @staticmethod
    def output_lengths(lengths):
        for _ in range(2):
            lengths = torch.div(lengths + 2 * 2 - 5, 2, rounding_mode="floor") + 1
        return lengths

    def forward(self, feats, lengths):
        x = self.subsample(feats.transpose(1, 2)).transpose(1, 2)
        lengths = self.output_lengths(lengths)
        packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, _ = self.rnn(packed)
        out, _ = pad_packed_sequence(out, batch_first=True)
        return self.classifier(out).log_softmax(dim=-1), lengths


def greedy_decode(log_probs, lengths):
    best = log_probs.argmax(dim=-1)
    texts = []
    for row, n in zip(best.tolist(), lengths.tolist()):
        chars, prev = [], BLANK
        for t in row[:n]:
            if t != prev and t != BLANK:
                chars.append(ALPHABET[t])
            prev = t
        texts.append("".join(chars))
    return texts


def edit_distance(a, b):
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


@torch.inference_mode()
def evaluate(model, loader, device):
    model.eval()
    errors, total = 0, 0
    for feats, feat_lens, targets, target_lens in loader:
        log_probs, out_lens = model(feats.to(device, non_blocking=True), feat_lens.to(device))
        hyps = greedy_decode(log_probs, out_lens)
        offsets = [0] + target_lens.cumsum(0).tolist()
        for k, hyp in enumerate(hyps):
            ref = "".join(ALPHABET[t] for t in targets[offsets[k]:offsets[k + 1]].tolist())
            errors += edit_distance(hyp, ref)
            total += max(len(ref), 1)
    return errors / max(total, 1)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=Path("runs/asr"))
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--workers", type=int, default=min(8, os.cpu_count() or 1))
    parser.add_argument("--amp", action="store_true")
    parser.add_argument("--resume", type=Path)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_set = FeatureDataset(args.data / "train")
    dev_set = FeatureDataset(args.data / "dev")
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, collate_fn=collate,
                              num_workers=args.workers, pin_memory=True, drop_last=True, persistent_workers=True)
    dev_loader = DataLoader(dev_set, batch_size=args.batch_size, collate_fn=collate,
                            num_workers=args.workers, pin_memory=True)

    model = Recognizer().to(device)
    ctc = nn.CTCLoss(blank=BLANK, zero_infinity=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-2)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.lr, epochs=args.epochs,
                                                    steps_per_epoch=len(train_loader))
    use_amp = args.amp and device.type == "cuda"
    scaler = torch.amp.GradScaler(device.type, enabled=use_amp)
    start_epoch, best_cer = 0, math.inf
    if args.resume is not None:
        state = torch.load(args.resume, map_location=device, weights_only=True)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        scaler.load_state_dict(state["scaler"])
        start_epoch, best_cer = state["epoch"] + 1, state["best_cer"]

    args.out.mkdir(parents=True, exist_ok=True)
    for epoch in range(start_epoch, args.epochs):
        model.train()
        running = torch.zeros((), device=device)
        for step, (feats, feat_lens, targets, target_lens) in enumerate(train_loader):
            feats = feats.to(device, non_blocking=True)
            feat_lens = feat_lens.to(device, non_blocking=True)
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast(device_type=device.type, dtype=torch.float16, enabled=use_amp):
                log_probs, out_lens = model(feats, feat_lens)
            loss = ctc(log_probs.float().transpose(0, 1), targets, out_lens, target_lens)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=5.0)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            running += loss.detach()
            if (step + 1) % 100 == 0:
                logger.info("epoch %d step %d ctc %.3f lr %.2e", epoch, step + 1,
                            running.item() / 100, scheduler.get_last_lr()[0])
                running.zero_()
        cer = evaluate(model, dev_loader, device)
        logger.info("epoch %d dev CER %.2f%%", epoch, 100 * cer)
        state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                 "scheduler": scheduler.state_dict(), "scaler": scaler.state_dict(),
                 "epoch": epoch, "best_cer": min(best_cer, cer)}
        torch.save(state, args.out / "last.pt")
        if cer < best_cer:
            best_cer = cer
            torch.save(model.state_dict(), args.out / "best.pt")


if __name__ == "__main__":
    main()

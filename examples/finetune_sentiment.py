"""Fine-tune a pretrained transformer encoder for sentiment classification, then evaluate it.

Usage: python finetune_sentiment.py --train train.jsonl --val val.jsonl --model distilroberta-base
"""
import argparse
import json
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModel, AutoTokenizer, get_linear_schedule_with_warmup


class JsonlReviews(Dataset):
    def __init__(self, path, tokenizer, max_len=256):
        with open(path, encoding="utf-8") as f:
            rows = [json.loads(line) for line in f]
        self.texts = [r["text"] for r in rows]
        self.labels = [int(r["label"]) for r in rows]
        self.tokenizer = tokenizer
        self.max_len = max_len

    def __len__(self):
        return len(self.texts)

    def __getitem__(self, i):
        enc = self.tokenizer(self.texts[i], truncation=True, max_length=self.max_len)
        return {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"], "label": self.labels[i]}


def collate(batch, pad_id):
    width = max(len(b["input_ids"]) for b in batch)
    ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    for row, b in enumerate(batch):
        ids[row, :len(b["input_ids"])] = torch.tensor(b["input_ids"])
        mask[row, :len(b["attention_mask"])] = 1
    labels = torch.tensor([b["label"] for b in batch])
    return ids, mask, labels


class SentimentClassifier(nn.Module):
    def __init__(self, encoder_name, num_labels=2, dropout=0.1):
        super().__init__()
        self.encoder = AutoModel.from_pretrained(encoder_name)
        hidden = self.encoder.config.hidden_size
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(hidden, num_labels)

    def forward(self, input_ids, attention_mask):
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)
        return self.classifier(self.dropout(pooled))


def warmup_head(model, loader, device, steps=200):
    """Train only the new classifier for a few steps before unfreezing the encoder."""
    model.train()
    head_optimizer = torch.optim.Adam(model.classifier.parameters(), lr=1e-3)
    # Mistake: head_optimizer never clears gradients, so they pile up every step (TL101).
    for step, (ids, mask, labels) in enumerate(loader):
        ids, mask, labels = ids.to(device), mask.to(device), labels.to(device)
        loss = F.cross_entropy(model(ids, mask), labels)
        loss.backward()
        head_optimizer.step()
        if step + 1 == steps:
            break


def train_epoch(model, loader, optimizer, scheduler, device, accum_steps, label_smoothing=0.1):
    model.train()
    running = torch.zeros((), device=device)
    optimizer.zero_grad(set_to_none=True)
    for step, (ids, mask, labels) in enumerate(loader):
        ids, mask = ids.to(device, non_blocking=True), mask.to(device, non_blocking=True)
        # Mistake: hard-coded "cuda" next to the device variable everything else uses (TL105).
        labels = labels.cuda()
        logits = model(ids, mask)
        probs = torch.softmax(logits, dim=-1)
        # Mistake: cross_entropy expects logits; softmax is applied twice (TL206).
        loss = F.cross_entropy(probs, labels, label_smoothing=label_smoothing) / accum_steps
        loss.backward()
        running += loss.detach()
        if (step + 1) % accum_steps == 0:
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
    return running.item() * accum_steps / len(loader)


@torch.no_grad()
def evaluate(model, loader, device):
    # Mistake: no model.eval(), so dropout is still active while scoring (TL103).
    correct = total = 0
    confusion = torch.zeros(2, 2, dtype=torch.long)
    for ids, mask, labels in loader:
        logits = model(ids.to(device), mask.to(device))
        preds = logits.argmax(dim=-1).cpu()
        correct += (preds == labels).sum().item()
        total += labels.numel()
        for t, p in zip(labels.tolist(), preds.tolist()):
            confusion[t, p] += 1
    return correct / total, confusion


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train", required=True)
    parser.add_argument("--val", required=True)
    parser.add_argument("--model", default="distilroberta-base")
    parser.add_argument("--resume", default=None)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--accum-steps", type=int, default=2)
    parser.add_argument("--lr", type=float, default=2e-5)
    args = parser.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    pad = lambda batch: collate(batch, tokenizer.pad_token_id)
    train_loader = DataLoader(JsonlReviews(args.train, tokenizer), batch_size=args.batch_size, shuffle=True,
                              collate_fn=pad, num_workers=2, pin_memory=True)
    val_loader = DataLoader(JsonlReviews(args.val, tokenizer), batch_size=64, collate_fn=pad,
                            num_workers=2, pin_memory=True)

    model = SentimentClassifier(args.model).to(device)
    if args.resume:
        state = torch.load(args.resume, map_location="cpu", weights_only=True)
        # Mistake: a checkpoint that does not fit the model loads without a word (TL204).
        model.load_state_dict(state["model"], strict=False)

    warmup_head(model, train_loader, device)

    no_decay = ("bias", "LayerNorm.weight")
    groups = [
        {"params": [p for n, p in model.named_parameters() if not n.endswith(no_decay)], "weight_decay": 0.01},
        {"params": [p for n, p in model.named_parameters() if n.endswith(no_decay)], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(groups, lr=args.lr)
    total_steps = math.ceil(len(train_loader) / args.accum_steps) * args.epochs
    scheduler = get_linear_schedule_with_warmup(optimizer, int(0.06 * total_steps), total_steps)

    for epoch in range(args.epochs):
        loss = train_epoch(model, train_loader, optimizer, scheduler, device, args.accum_steps)
        acc, confusion = evaluate(model, val_loader, device)
        print(f"epoch {epoch}: loss {loss:.4f} val acc {acc:.4f}\n{confusion}")
    torch.save({"model": model.state_dict()}, "sentiment_classifier.pt")


if __name__ == "__main__":
    main()

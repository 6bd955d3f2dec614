"""Clean script: distilling a fine-tuned BERT teacher into a small student for sentence
classification with HF accelerate: the teacher loaded with `from_pretrained` and run under
`torch.no_grad()` inside the training step, gradient accumulation through
`accelerator.accumulate`, a linear warm-up schedule stepped after the optimizer, an evaluation
helper called every epoch that switches to eval mode under `torch.no_grad()` and the epoch
loop switching back with `student.train()`, and early stopping on validation accuracy."""
import math

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification, AutoTokenizer, DataCollatorWithPadding, \
    get_linear_schedule_with_warmup

TEACHER = "textattack/bert-base-uncased-SST-2"
STUDENT = "google/bert_uncased_L-4_H-256_A-4"


def kd_loss(student_logits, teacher_logits, labels, tau=3.0, alpha=0.7):
    soft = F.kl_div(F.log_softmax(student_logits / tau, dim=-1), F.log_softmax(teacher_logits / tau, dim=-1),
                    reduction="batchmean", log_target=True) * tau * tau
    return alpha * soft + (1 - alpha) * F.cross_entropy(student_logits, labels)


def evaluate(accelerator, model, loader):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for batch in loader:
            logits = model(**{k: v for k, v in batch.items() if k != "labels"}).logits
            preds, labels = accelerator.gather_for_metrics((logits.argmax(dim=-1), batch["labels"]))
            correct += (preds == labels).sum()
            total += labels.numel()
    return float(correct) / max(total, 1)


def main(epochs=6, batch_size=32, accum=2, lr=1e-4, patience=2):
    accelerator = Accelerator(mixed_precision="bf16", gradient_accumulation_steps=accum)
    tokenizer = AutoTokenizer.from_pretrained(STUDENT)
    raw = load_dataset("glue", "sst2")
    encoded = raw.map(lambda b: tokenizer(b["sentence"], truncation=True, max_length=128), batched=True)
    encoded = encoded.remove_columns(["sentence", "idx"]).rename_column("label", "labels")
    collate = DataCollatorWithPadding(tokenizer)
    train_dl = DataLoader(encoded["train"], batch_size=batch_size, shuffle=True, collate_fn=collate,
                          num_workers=4, pin_memory=True)
    val_dl = DataLoader(encoded["validation"], batch_size=128, collate_fn=collate, num_workers=4,
                        pin_memory=True)

    teacher = AutoModelForSequenceClassification.from_pretrained(TEACHER)
    student = AutoModelForSequenceClassification.from_pretrained(STUDENT, num_labels=2)
    optimizer = torch.optim.AdamW(student.parameters(), lr=lr, weight_decay=0.01)
    steps = epochs * math.ceil(len(train_dl) / accum)
    scheduler = get_linear_schedule_with_warmup(optimizer, int(0.06 * steps), steps)
    student, teacher, optimizer, train_dl, val_dl, scheduler = accelerator.prepare(
        student, teacher, optimizer, train_dl, val_dl, scheduler)
    teacher.eval()

    best, waited = 0.0, 0
    for epoch in range(epochs):
        student.train()
        running = torch.zeros((), device=accelerator.device)
        for batch in train_dl:
            with accelerator.accumulate(student):
                inputs = {k: v for k, v in batch.items() if k != "labels"}
                with torch.no_grad():
                    teacher_logits = teacher(**inputs).logits
                loss = kd_loss(student(**inputs).logits, teacher_logits, batch["labels"])
                accelerator.backward(loss)
                if accelerator.sync_gradients:
                    accelerator.clip_grad_norm_(student.parameters(), 1.0)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad(set_to_none=True)
            running += loss.detach()
        acc = evaluate(accelerator, student, val_dl)
        accelerator.print(f"epoch {epoch}: train {float(running) / len(train_dl):.4f} val acc {acc:.4f}")
        if acc > best:
            best, waited = acc, 0
            accelerator.save_model(student, "student-best")
        else:
            waited += 1
            if waited >= patience:
                break
    accelerator.print(f"best val acc {best:.4f}")


if __name__ == "__main__":
    main()

"""TL401 probe: an HF-style trainer class with gradient accumulation: a tqdm postfix of
`loss.item()` on every micro-batch, per-step `.cpu().numpy()` of predictions for a running
F1, and `grad_norm.item()` returned by `clip_grad_norm_` each optimizer step; near misses are
a log line under `if self.state.global_step % self.args.logging_steps == 0`, a check combined
with `and` on a `%` test, the learning rate from `scheduler.get_last_lr()` (a Python float),
the evaluation loop's `.tolist()` (no backward there), and a parameter-server worker that
sends its model (`get_model().cuda()`, a module, not a batch) back with `m.cpu()`."""
import numpy as np
import torch
from sklearn.metrics import f1_score
from tqdm.auto import tqdm


class TrainerState:
    def __init__(self):
        self.global_step = 0
        self.log_history = []


class Trainer:
    def __init__(self, model, args, train_loader, eval_loader, optimizer, scheduler):
        self.model, self.args = model, args
        self.train_loader, self.eval_loader = train_loader, eval_loader
        self.optimizer, self.scheduler = optimizer, scheduler
        self.state = TrainerState()

    def train(self):
        self.model.train()
        accum = self.args.gradient_accumulation_steps
        for epoch in range(self.args.num_train_epochs):
            bar = tqdm(self.train_loader, desc=f"epoch {epoch}")
            preds, labels = [], []
            for step, batch in enumerate(bar):
                batch = {k: v.to(self.args.device) for k, v in batch.items()}
                outputs = self.model(**batch)
                loss = outputs.loss / accum
                loss.backward()
                bar.set_postfix(loss=loss.item() * accum)  # expect: TL401
                preds.append(outputs.logits.argmax(-1).cpu().numpy())  # expect: TL401
                labels.append(batch["labels"].cpu().numpy())  # expect: TL401
                if (step + 1) % accum != 0:
                    continue
                grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.args.max_grad_norm)
                self.optimizer.step()
                self.scheduler.step()
                self.optimizer.zero_grad(set_to_none=True)
                self.state.global_step += 1
                self.state.log_history.append({"grad_norm": grad_norm.item()})  # expect: TL401
                lr = self.scheduler.get_last_lr()[0]  # clean
                if self.state.global_step % self.args.logging_steps == 0:
                    print(f"step {self.state.global_step} loss {loss.item() * accum:.4f} lr {lr:.2e}")  # clean
                if self.args.eval_steps and self.state.global_step % self.args.eval_steps == 0:
                    self.state.log_history.append(self.evaluate())
            print("train f1", f1_score(np.concatenate(labels), np.concatenate(preds), average="macro"))

    @torch.no_grad()
    def evaluate(self):
        self.model.eval()
        preds, labels = [], []
        for batch in self.eval_loader:
            batch = {k: v.to(self.args.device) for k, v in batch.items()}
            logits = self.model(**batch).logits
            preds += logits.argmax(-1).tolist()  # clean
            labels += batch["labels"].tolist()  # clean
        self.model.train()
        return {"eval_f1": f1_score(labels, preds, average="macro")}


def parameter_server_worker(server, batches, loss_fn):
    m = server.get_model().cuda()
    for inputs, labels in batches:
        loss_fn(m(inputs.cuda()), labels.cuda()).backward()
        grads = [p.grad for p in m.cpu().parameters()]  # clean
        m = server.update_and_fetch(grads).cuda()
    return m

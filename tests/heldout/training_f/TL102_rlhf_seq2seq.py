"""TL102 probe: a seq2seq trainer with teacher forcing that validates every `eval_every` steps inside
its step loop (the eval helper sets `model.eval()` and nothing puts it back), and a PPO-style RLHF loop
whose policy is scored by a `generate_rollouts` helper that switches it to eval mode each iteration;
near misses: the frozen reference model and the reward model stay in eval mode on purpose and run under
`torch.no_grad()`, and a second seq2seq trainer calls `model.train()` at the top of every epoch."""
import torch
import torch.nn.functional as F
from torch import nn


class Seq2Seq(nn.Module):
    def __init__(self, vocab=8000, dim=256):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.encoder = nn.GRU(dim, dim, batch_first=True)
        self.decoder = nn.GRU(dim, dim, batch_first=True)
        self.drop = nn.Dropout(0.3)
        self.out = nn.Linear(dim, vocab)

    def forward(self, src, tgt_in):
        _, h = self.encoder(self.drop(self.emb(src)))
        dec, _ = self.decoder(self.drop(self.emb(tgt_in)), h)
        return self.out(dec)


def validate(model, loader, pad_id=0):
    model.eval()
    total = 0.0
    with torch.no_grad():
        for src, tgt in loader:
            logits = model(src, tgt[:, :-1])
            total += F.cross_entropy(logits.flatten(0, 1), tgt[:, 1:].flatten(), ignore_index=pad_id).item()
    return total / max(len(loader), 1)


def train_teacher_forcing(model, train_loader, val_loader, epochs=20, eval_every=500):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.train()
    step = 0
    for epoch in range(epochs):
        for src, tgt in train_loader:  # expect: TL102
            logits = model(src, tgt[:, :-1])
            loss = F.cross_entropy(logits.flatten(0, 1), tgt[:, 1:].flatten(), ignore_index=0)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            step += 1
            if step % eval_every == 0:
                print(step, validate(model, val_loader))


def train_epochs_restoring(model, train_loader, val_loader, epochs=20):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        model.train()
        for src, tgt in train_loader:  # clean
            loss = F.cross_entropy(model(src, tgt[:, :-1]).flatten(0, 1), tgt[:, 1:].flatten())
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        print(epoch, validate(model, val_loader))


def generate_rollouts(policy, prompts, max_new_tokens=32):
    policy.eval()
    with torch.no_grad():
        return policy.generate(prompts, max_new_tokens=max_new_tokens, do_sample=True)


def ppo_rlhf(policy, ref_policy, reward_model, prompt_loader, iterations=100, ppo_epochs=4, kl_coef=0.05):
    optimizer = torch.optim.AdamW(policy.parameters(), lr=1e-5)
    ref_policy.eval()
    reward_model.eval()
    for it, prompts in zip(range(iterations), prompt_loader):
        sequences = generate_rollouts(policy, prompts)
        with torch.no_grad():
            ref_logp = F.log_softmax(ref_policy(sequences).logits, dim=-1)
            rewards = reward_model(sequences).logits.squeeze(-1)  # clean
            old_logp = F.log_softmax(policy(sequences).logits, dim=-1)
        for _ in range(ppo_epochs):  # expect: TL102
            logp = F.log_softmax(policy(sequences).logits, dim=-1)
            ratio = (logp - old_logp).sum(-1).exp()
            kl = (logp.exp() * (logp - ref_logp)).sum(-1).mean()
            loss = -(ratio * rewards).mean() + kl_coef * kl
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()

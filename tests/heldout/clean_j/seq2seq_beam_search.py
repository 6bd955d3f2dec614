"""A GRU encoder-decoder trained with teacher forcing and scheduled sampling, decoded with beam
search at evaluation, with gradient checkpointing over the encoder layers."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint

PAD, BOS, EOS = 0, 1, 2


class Encoder(nn.Module):
    def __init__(self, vocab, dim, layers=3):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim, padding_idx=PAD)
        self.blocks = nn.ModuleList(nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Dropout(0.1))
                                    for _ in range(layers))
        self.rnn = nn.GRU(dim, dim, batch_first=True)

    def forward(self, src):
        h = self.emb(src)
        for block in self.blocks:
            h = checkpoint(block, h, use_reentrant=False) if self.training else block(h)
        out, last = self.rnn(h)
        return out, last


class Decoder(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim, padding_idx=PAD)
        self.cell = nn.GRUCell(2 * dim, dim)
        self.out = nn.Linear(2 * dim, vocab)
        self.drop = nn.Dropout(0.1)

    def forward(self, token, state, memory):
        scores = (memory @ state.unsqueeze(-1)).squeeze(-1).softmax(-1)
        context = (scores.unsqueeze(-1) * memory).sum(1)
        state = self.cell(torch.cat([self.drop(self.emb(token)), context], dim=-1), state)
        return self.out(torch.cat([state, context], dim=-1)), state


class Seq2Seq(nn.Module):
    def __init__(self, vocab=1000, dim=128):
        super().__init__()
        self.encoder = Encoder(vocab, dim)
        self.decoder = Decoder(vocab, dim)

    def forward(self, src, tgt, sampling_p=0.0):
        memory, last = self.encoder(src)
        state = last[0]
        token = tgt[:, 0]
        logits = []
        for t in range(1, tgt.size(1)):
            step_logits, state = self.decoder(token, state, memory)
            logits.append(step_logits)
            use_model = torch.rand(tgt.size(0), device=tgt.device) < sampling_p
            token = torch.where(use_model, step_logits.argmax(-1), tgt[:, t])
        return torch.stack(logits, dim=1)


@torch.no_grad()
def beam_search(model, src, beam=4, max_len=30):
    model.eval()
    memory, last = model.encoder(src[None])
    hyps = [([BOS], 0.0, last[0])]
    for _ in range(max_len):
        candidates = []
        for tokens, score, state in hyps:
            if tokens[-1] == EOS:
                candidates.append((tokens, score, state))
                continue
            token = torch.tensor([tokens[-1]], device=src.device)
            logits, new_state = model.decoder(token, state, memory)
            top = logits.log_softmax(-1)[0].topk(beam)
            for lp, idx in zip(top.values.tolist(), top.indices.tolist()):
                candidates.append((tokens + [idx], score + lp, new_state))
        hyps = sorted(candidates, key=lambda h: h[1] / len(h[0]), reverse=True)[:beam]
        if all(h[0][-1] == EOS for h in hyps):
            break
    return hyps[0][0]


def train(model, batches, optimizer, scheduler, epochs, device):
    for epoch in range(epochs):
        model.train()
        sampling_p = min(0.25, 0.05 * epoch)
        epoch_loss = 0.0
        for i, (src, tgt) in enumerate(batches):
            src, tgt = src.to(device), tgt.to(device)
            optimizer.zero_grad(set_to_none=True)
            logits = model(src, tgt, sampling_p)
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), tgt[:, 1:].reshape(-1), ignore_index=PAD)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            epoch_loss += loss.detach()
        scheduler.step()
        print(epoch, float(epoch_loss) / len(batches), beam_search(model, batches[0][0][0].to(device)))


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Seq2Seq().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.5)
    batches = [(torch.randint(3, 1000, (16, 12)), torch.randint(3, 1000, (16, 14))) for _ in range(20)]
    train(model, batches, optimizer, scheduler, 10, device)

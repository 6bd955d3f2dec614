"""TL201 probe: speech code. A CTC acoustic model over log-mel spectrograms whose head returns
`F.log_softmax(...)` with no `dim` on a sequence-first `[T, B, V]` tensor (the implicit choice is
dim 0 for a 3-d input: it normalises over time, and `F.ctc_loss` trains on garbage), an
attention-pooling keyword spotter built with `nn.Softmax()`, and a few-shot keyword matcher taking
`F.softmin(dist)` of a query-to-prototype distance matrix; near misses are `nn.LogSoftmax(dim=-1)`,
the dim given by position (`torch.softmax(scores, -1)`, `F.softmax(t, 1)`), `F.gumbel_softmax`
(whose `dim` defaults to -1 and never warns) and the CTC loss fed the right log-probabilities."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchaudio


class LstmCTC(nn.Module):
    def __init__(self, n_mels=80, hidden=256, vocab=32):
        super().__init__()
        self.frontend = torchaudio.transforms.MelSpectrogram(sample_rate=16000, n_fft=400, hop_length=160, n_mels=n_mels)
        self.encoder = nn.LSTM(n_mels, hidden, num_layers=2, bidirectional=True)
        self.head = nn.Linear(2 * hidden, vocab)

    def forward(self, wav):
        feats = torch.log(self.frontend(wav) + 1e-6)
        feats = feats.permute(2, 0, 1)
        out, _ = self.encoder(feats)
        return F.log_softmax(self.head(out))  # expect: TL201


def ctc_step(model, wav, targets, input_lengths, target_lengths, optimizer):
    model.train()
    log_probs = model(wav)
    loss = F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, zero_infinity=True)  # clean
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    return loss.detach()


class AttentivePooling(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.score = nn.Linear(dim, 1)
        self.norm = nn.Softmax()  # expect: TL201

    def forward(self, frames):
        w = self.norm(self.score(frames).squeeze(-1))
        return (w.unsqueeze(-1) * frames).sum(1)


class KeywordHead(nn.Module):
    def __init__(self, dim, n_keywords):
        super().__init__()
        self.pool = AttentivePooling(dim)
        self.proj = nn.Linear(dim, n_keywords)
        self.log_probs = nn.LogSoftmax(dim=-1)  # clean

    def forward(self, frames):
        return self.log_probs(self.proj(self.pool(frames)))


def prototype_log_probs(query_emb, prototypes):
    dist = torch.cdist(query_emb, prototypes)
    return torch.log(F.softmin(dist) + 1e-9)  # expect: TL201


def frame_weights(scores):
    return torch.softmax(scores, -1)  # clean


def soft_labels(teacher_logits, T=2.0):
    return F.softmax(teacher_logits / T, 1)  # clean


def hard_keyword_mask(logits, tau=0.5):
    return F.gumbel_softmax(logits, tau=tau, hard=True)  # clean

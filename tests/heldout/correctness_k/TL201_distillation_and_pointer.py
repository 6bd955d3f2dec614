"""TL201 probe: knowledge distillation and a pointer network. The distillation loss softens the
teacher with `F.softmax(teacher_logits / T)` and the student with `F.log_softmax(student_logits / T)`,
both without `dim`, a pointer network's attention head is built as `nn.LogSoftmax()` without `dim`,
and a sampler with temperature calls `F.softmax` on the scaled logits with `dim=None`
given explicitly (the implicit choice spelled out: it warns and picks a dim as the legacy rule does); near misses are the same KD loss with `dim=-1`,
`dim=1` passed positionally to `F.softmax` and to the tensor method, `nn.Softmax(dim=-1)`, and
`torch.softmax(x, -1)`."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def kd_loss_legacy(student_logits, teacher_logits, T=4.0):
    p_t = F.softmax(teacher_logits / T)  # expect: TL201
    log_p_s = F.log_softmax(student_logits / T)  # expect: TL201
    return F.kl_div(log_p_s, p_t, reduction="batchmean") * T * T


def kd_loss(student_logits, teacher_logits, T=4.0):
    p_t = F.softmax(teacher_logits / T, dim=-1)  # clean
    log_p_s = F.log_softmax(student_logits / T, 1)  # clean
    return F.kl_div(log_p_s, p_t, reduction="batchmean") * T * T


def kd_loss_methods(student_logits, teacher_logits, T=4.0):
    p_t = (teacher_logits / T).softmax(1)  # clean
    log_p_s = (student_logits / T).log_softmax(dim=-1)  # clean
    return (p_t * (p_t.clamp_min(1e-8).log() - log_p_s)).sum(1).mean() * T * T


class PointerHead(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.w_enc = nn.Linear(hidden, hidden, bias=False)
        self.w_dec = nn.Linear(hidden, hidden, bias=False)
        self.v = nn.Linear(hidden, 1, bias=False)
        self.log_softmax = nn.LogSoftmax()  # expect: TL201
        self.copy_gate = nn.Softmax(dim=-1)  # clean

    def forward(self, enc_out, dec_state, mask):
        # enc_out: [B, T, H], dec_state: [B, H]
        e = self.v(torch.tanh(self.w_enc(enc_out) + self.w_dec(dec_state).unsqueeze(1))).squeeze(-1)
        e = e.masked_fill(~mask, float("-inf"))
        return self.log_softmax(e)


def sample_next(logits, temperature=0.8):
    probs = F.softmax(logits / temperature, dim=None)  # expect: TL201
    return torch.multinomial(probs, 1)


def sample_next_fixed(logits, temperature=0.8):
    probs = torch.softmax(logits / temperature, -1)  # clean
    return torch.multinomial(probs, 1)

"""TL203 probe: a CTC speech recognizer and a CLIP-style patch embedder: the conv front-end's
`[B, C, T]` features flattened after `.transpose(1, 2)` with `.view(B, T, -1)`, the CTC log-probs
made time-major through a variable (`tm = log_probs.permute(1, 0, 2)`) and then viewed, and a
ViT patchifier that views `x.permute(0, 2, 4, 3, 5, 1)`; near misses are the same reshapes spelt
`.reshape`, a `.contiguous()` chained before `.view`, a variable rebound to `.contiguous()` of
the transposed tensor before the view, and a `.view` on the untransposed tensor followed by a
transpose (the split-heads idiom)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvFrontEnd(nn.Module):
    def __init__(self, n_mels=80, channels=32):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(1, channels, 3, stride=2, padding=1), nn.GELU(),
            nn.Conv2d(channels, channels, 3, stride=2, padding=1), nn.GELU(),
        )
        self.proj = nn.Linear(channels * ((n_mels + 3) // 4), 256)

    def forward(self, mels):
        x = self.conv(mels.unsqueeze(1))
        B, C, F_, T = x.shape
        x = x.transpose(1, 3).view(B, T, C * F_)  # expect: TL203
        return self.proj(x)


class CTCHead(nn.Module):
    def __init__(self, dim, vocab):
        super().__init__()
        self.fc = nn.Linear(dim, vocab)

    def forward(self, enc):
        B, T, _ = enc.shape
        log_probs = self.fc(enc).log_softmax(-1)
        tm = log_probs.permute(1, 0, 2)
        flat = tm.view(T * B, -1)  # expect: TL203
        return tm, flat


def ctc_loss(head, enc, targets, in_lens, tgt_lens):
    tm, _ = head(enc)
    return F.ctc_loss(tm, targets, in_lens, tgt_lens, blank=0, zero_infinity=True)


def patchify(images, p=16):
    B, C, H, W = images.shape
    x = images.view(B, C, H // p, p, W // p, p)  # clean
    x = x.permute(0, 2, 4, 3, 5, 1)
    return x.view(B, (H // p) * (W // p), p * p * C)  # expect: TL203


def patchify_safe(images, p=16):
    B, C, H, W = images.shape
    x = images.reshape(B, C, H // p, p, W // p, p).permute(0, 2, 4, 3, 5, 1)
    return x.reshape(B, (H // p) * (W // p), p * p * C)  # clean


def frames_time_major(feats):
    B, C, T = feats.shape
    return feats.transpose(1, 2).contiguous().view(B * T, C)  # clean


def frames_rebound(feats):
    B, C, T = feats.shape
    x = feats.transpose(1, 2)
    x = x.contiguous()
    return x.view(B * T, C)  # clean


def split_heads(x, n_heads):
    B, N, D = x.shape
    return x.view(B, N, n_heads, D // n_heads).transpose(1, 2)  # clean

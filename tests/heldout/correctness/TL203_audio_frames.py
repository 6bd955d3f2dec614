"""TL203 probe: audio frame re-layouts where the transposed tensor is kept in a variable and viewed later,
including through a reassigned name; near misses make it contiguous first or view before transposing."""
import torch
import torch.nn as nn


class ConformerSubsampling(nn.Module):
    def __init__(self, n_mels=80, dim=256):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, dim, 3, stride=2), nn.ReLU(), nn.Conv2d(dim, dim, 3, stride=2), nn.ReLU())
        self.out = nn.Linear(dim * (((n_mels - 1) // 2 - 1) // 2), dim)

    def forward(self, mel):
        # mel: [B, T, F]
        x = self.conv(mel.unsqueeze(1))  # [B, C, T', F']
        B, C, T, F = x.shape
        x = x.transpose(1, 2)
        x = x.view(B, T, C * F)  # expect: TL203
        return self.out(x)


class ConformerSubsamplingFixed(ConformerSubsampling):
    def forward(self, mel):
        x = self.conv(mel.unsqueeze(1))
        B, C, T, F = x.shape
        x = x.transpose(1, 2)
        x = x.contiguous()
        return self.out(x.view(B, T, C * F))  # clean


def frames_to_batch(wave, frame):
    # wave: [B, L] -> [B * n_frames, frame]
    B, L = wave.shape
    framed = wave.view(B, L // frame, frame)  # clean
    return framed.reshape(-1, frame)


def stereo_interleave(left, right):
    pair = torch.stack([left, right], dim=0)  # [2, B, L]
    swapped = pair.swapaxes(0, 1)
    return swapped.view(left.size(0), -1)  # expect: TL203

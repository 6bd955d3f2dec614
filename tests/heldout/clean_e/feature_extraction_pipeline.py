"""Clean: an offline feature-extraction job over sharded audio: a streaming dataset, a loader
with workers and pinned memory, embeddings collected in a list and joined once, a whole-batch
forward pass, and the result written with `torch.save`."""
import glob
import os

import torch
import torch.nn as nn
import torchaudio
from torch.utils.data import DataLoader, IterableDataset, get_worker_info


class ShardedAudio(IterableDataset):
    def __init__(self, pattern, sample_rate=16000, seconds=4):
        self.files = sorted(glob.glob(pattern))
        self.sample_rate = sample_rate
        self.frames = sample_rate * seconds

    def __iter__(self):
        info = get_worker_info()
        files = self.files if info is None else self.files[info.id::info.num_workers]
        for path in files:
            wav, sr = torchaudio.load(path)
            if sr != self.sample_rate:
                wav = torchaudio.functional.resample(wav, sr, self.sample_rate)
            wav = wav.mean(0)
            for start in range(0, wav.numel() - self.frames + 1, self.frames):
                yield wav[start:start + self.frames], os.path.basename(path)


class Encoder(nn.Module):
    def __init__(self, n_mels=80, dim=256):
        super().__init__()
        self.mel = torchaudio.transforms.MelSpectrogram(16000, n_mels=n_mels)
        self.conv = nn.Sequential(nn.Conv1d(n_mels, dim, 5, padding=2), nn.GELU(), nn.Conv1d(dim, dim, 5, padding=2))

    def forward(self, wav):
        mel = torch.log1p(self.mel(wav))
        h = self.conv(mel)
        return h.mean(-1)


def extract(pattern, ckpt, out_path, device="cuda"):
    device = torch.device(device if torch.cuda.is_available() else "cpu")
    encoder = Encoder()
    encoder.load_state_dict(torch.load(ckpt, map_location="cpu", weights_only=True))
    encoder = encoder.to(device).eval()
    loader = DataLoader(ShardedAudio(pattern), batch_size=64, num_workers=4, pin_memory=True)
    chunks, names = [], []
    with torch.inference_mode():
        for wav, batch_names in loader:
            emb = encoder(wav.to(device, non_blocking=True))
            chunks.append(emb.cpu())
            names.extend(batch_names)
    embeddings = torch.cat(chunks) if chunks else torch.empty(0, 256)
    torch.save({"embeddings": embeddings, "names": names}, out_path)
    return embeddings.shape

"""TL405 probe: an audio pipeline built on an `IterableDataset` of sharded files (each worker reads
its own shards through `get_worker_info()`), trained on the GPU: the training loader is built
without `num_workers` (one process decodes all audio), the validation loader with
`num_workers=0`, and a loader of pre-batched shards (`batch_size=None`) with workers but without
`pin_memory=True` although its batches go to the GPU; near misses are a loader with workers and
pinned memory, and a CPU-only loader that computes normalisation statistics on the host."""
import math

import torch
import torchaudio
from torch.utils.data import DataLoader, IterableDataset, get_worker_info


class ShardedAudio(IterableDataset):
    def __init__(self, shards, n_mels=64, prebatched=False):
        super().__init__()
        self.shards = shards
        self.prebatched = prebatched
        self.mel = torchaudio.transforms.MelSpectrogram(16000, n_fft=512, hop_length=160, n_mels=n_mels)

    def __iter__(self):
        info = get_worker_info()
        shards = self.shards if info is None else self.shards[info.id::info.num_workers]
        for path in shards:
            blob = torch.load(path, weights_only=True)
            for wav, label in zip(blob["wavs"], blob["labels"]):
                yield torch.log(self.mel(wav) + 1e-6), label


def collate_pad(batch):
    feats, labels = zip(*batch)
    T = max(f.size(-1) for f in feats)
    out = torch.stack([torch.nn.functional.pad(f, (0, T - f.size(-1))) for f in feats])
    return out, torch.tensor(labels)


def norm_stats(shards):
    mean, sq, n = 0.0, 0.0, 0
    for feats, _ in DataLoader(ShardedAudio(shards), batch_size=64, num_workers=4, collate_fn=collate_pad):  # clean
        mean += feats.sum().item()
        sq += (feats ** 2).sum().item()
        n += feats.numel()
    mean /= n
    return mean, math.sqrt(sq / n - mean ** 2)


def build_loaders(train_shards, val_shards, prebatched_shards):
    train_loader = DataLoader(ShardedAudio(train_shards), batch_size=32, collate_fn=collate_pad)  # expect: TL405
    val_loader = DataLoader(ShardedAudio(val_shards), batch_size=64, num_workers=0, collate_fn=collate_pad)  # expect: TL405
    extra_loader = DataLoader(ShardedAudio(prebatched_shards, prebatched=True), batch_size=None, num_workers=4)  # expect: TL405
    return train_loader, val_loader, extra_loader


def build_loaders_fast(train_shards):
    return DataLoader(ShardedAudio(train_shards), batch_size=32, num_workers=8, pin_memory=True,  # clean
                      persistent_workers=True, collate_fn=collate_pad)


def train(model, loaders, device, epochs=10):
    model.to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        model.train()
        for loader in loaders:
            for feats, labels in loader:
                feats, labels = feats.to(device, non_blocking=True), labels.to(device, non_blocking=True)
                loss = torch.nn.functional.cross_entropy(model(feats), labels)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()

"""TL405 probe: loaders of a GPU speech-enhancement trainer reading wav files: one without
`pin_memory` whose batches the training loop moves to the device, one without `num_workers`,
against loaders with workers from the config and pinning tied to CUDA availability."""
import torch
import torchaudio
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class NoisyClean(Dataset):
    def __init__(self, pairs):
        self.pairs = pairs

    def __len__(self):
        return len(self.pairs)

    def __getitem__(self, i):
        noisy_path, clean_path = self.pairs[i]
        noisy, _ = torchaudio.load(noisy_path)
        clean, _ = torchaudio.load(clean_path)
        return noisy[:, :64000], clean[:, :64000]


def train(model, train_pairs, val_pairs, cfg):
    train_loader = DataLoader(NoisyClean(train_pairs), batch_size=cfg.batch_size, shuffle=True, num_workers=8, drop_last=True)  # expect: TL405
    val_loader = DataLoader(NoisyClean(val_pairs), batch_size=cfg.batch_size)  # expect: TL405
    model = model.to(device)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    l1 = nn.L1Loss()
    for epoch in range(cfg.epochs):
        model.train()
        for noisy, clean in train_loader:
            noisy, clean = noisy.to(device), clean.to(device)
            loss = l1(model(noisy), clean)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            val = sum(l1(model(n.to(device)), c.to(device)) for n, c in val_loader) / len(val_loader)
        print(f"epoch {epoch}: val L1 {val:.4f}")
    return model


def loaders_fixed(train_pairs, val_pairs, cfg):
    train_loader = DataLoader(NoisyClean(train_pairs), batch_size=cfg.batch_size, shuffle=True,  # clean
                              num_workers=cfg.num_workers, pin_memory=torch.cuda.is_available(), persistent_workers=True)
    val_loader = DataLoader(NoisyClean(val_pairs), batch_size=cfg.batch_size, num_workers=cfg.num_workers, pin_memory=True)  # clean
    return train_loader, val_loader

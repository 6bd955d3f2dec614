"""TL405 probe: loaders of a GPU image-captioning fine-tune that moves batches with
`.to(device)`: a qualified `torch.utils.data.DataLoader` with workers but no `pin_memory`, an
aliased `DL(...)` with `num_workers=0` for validation, and one built inside
`accelerator.prepare(...)` without `num_workers`; near misses are loaders that pin memory only
on CUDA and take their workers from `os.cpu_count()`, a WebDataset `WebLoader` (another
library's loader), a loader over an `IterableDataset` that streams from already-batched shards
(`batch_size=None`, workers set) and a loader that spreads a config dict."""
import os

import torch
import torch.utils.data
import webdataset as wds
from accelerate import Accelerator
from torch.utils.data import DataLoader as DL
from torch.utils.data import IterableDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class ShardStream(IterableDataset):
    def __init__(self, urls):
        self.urls = urls

    def __iter__(self):
        for url in self.urls:
            yield torch.load(url, weights_only=True)


def build_loaders(train_ds, val_ds, cfg, shard_urls):
    train_loader = torch.utils.data.DataLoader(train_ds, batch_size=cfg.bs, shuffle=True, num_workers=8)  # expect: TL405
    val_loader = DL(val_ds, batch_size=cfg.bs * 2, num_workers=0)  # expect: TL405
    test_loader = DL(val_ds, batch_size=cfg.bs, num_workers=os.cpu_count(),  # clean
                     pin_memory=torch.cuda.is_available())
    shard_loader = DL(ShardStream(shard_urls), batch_size=None, num_workers=4, pin_memory=True)  # clean
    web_loader = wds.WebLoader(wds.WebDataset(shard_urls).decode("pil"), batch_size=cfg.bs)  # clean
    cfg_loader = DL(train_ds, **cfg.loader_kwargs)  # clean
    return train_loader, val_loader, test_loader, shard_loader, web_loader, cfg_loader


def main(model, train_ds, val_ds, cfg, shard_urls):
    accelerator = Accelerator(mixed_precision="bf16")
    loader = accelerator.prepare(DL(train_ds, batch_size=cfg.bs, shuffle=True))  # expect: TL405
    train_loader, val_loader, *_ = build_loaders(train_ds, val_ds, cfg, shard_urls)
    model = model.to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
    for images, captions in train_loader:
        images, captions = images.to(device), captions.to(device)
        loss = model(images, labels=captions).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return loader, val_loader

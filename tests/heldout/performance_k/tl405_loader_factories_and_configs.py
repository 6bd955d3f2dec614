"""TL405 probe: DataLoaders built in factories and from config dicts, for a segmentation trainer
that moves its batches to the GPU. A factory builds the training loader with the batch size and
shuffle from the config but no `num_workers`, another builds the validation loader with
`num_workers=cfg["workers"]` and no `pin_memory`, and a calibration loader passes
`num_workers=0` explicitly; near misses are a loader built from `**cfg["loader"]` (what the dict
holds is unknown), one with workers and `pin_memory=True` both read from the config, and a loader
with `pin_memory=cfg.get("pin", True)` (a value the config may turn off on purpose)."""
import torch
from torch.utils.data import DataLoader

CFG = {
    "batch_size": 8,
    "workers": 6,
    "pin": True,
    "loader": {"batch_size": 8, "num_workers": 6, "pin_memory": True, "drop_last": True},
}


def make_train_loader(dataset, cfg=CFG):
    return DataLoader(dataset, batch_size=cfg["batch_size"], shuffle=True, drop_last=True)  # expect: TL405


def make_val_loader(dataset, cfg=CFG):
    return DataLoader(dataset, batch_size=cfg["batch_size"] * 2, num_workers=cfg["workers"])  # expect: TL405


def make_calib_loader(dataset):
    return DataLoader(dataset, batch_size=1, num_workers=0, pin_memory=True)  # expect: TL405


def make_loader_from_config(dataset, cfg=CFG):
    return DataLoader(dataset, shuffle=True, **cfg["loader"])  # clean


def make_fast_loader(dataset, cfg=CFG):
    return DataLoader(dataset, batch_size=cfg["batch_size"], shuffle=True,  # clean
                      num_workers=cfg["workers"], pin_memory=cfg["pin"], persistent_workers=True)


def make_configurable_loader(dataset, cfg=CFG):
    return DataLoader(dataset, batch_size=cfg["batch_size"], num_workers=cfg["workers"],  # clean
                      pin_memory=cfg.get("pin", True))


def train_epoch(model, loader, optimizer, criterion, device):
    model.train()
    for images, masks in loader:
        images = images.to(device, non_blocking=True)
        masks = masks.to(device, non_blocking=True)
        loss = criterion(model(images), masks)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

import torch
from torch.utils.data import DataLoader

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def loaders(train_ds, val_ds, batch_size):
    train_loader = DataLoader(train_ds, batch_size=batch_size, shuffle=True)
    val_loader = DataLoader(
        val_ds,
        batch_size=batch_size,
        num_workers=0,
    )
    return train_loader, val_loader


def first_batch(loader):
    images, labels = next(iter(loader))
    return images.to(device, non_blocking=True), labels.to(device, non_blocking=True)

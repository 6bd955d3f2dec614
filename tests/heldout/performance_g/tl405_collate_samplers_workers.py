"""TL405 probe: a speech data pipeline with a padding `collate_fn` and a bucketing
`batch_sampler`, in a file that moves batches with `.to(device)`: the training loader has
workers but no `pin_memory`, the validation loader built from a `functools.partial` collate has
neither, and a loader created in a dict comprehension per split sets `num_workers=0`; near misses
are a loader with `num_workers=cfg.workers, pin_memory=True`, a loader whose kwargs come from
`**loader_kwargs` (the caller may set both), and a plain `Dataset` subclass's own `DataLoader`-like
helper method."""
from functools import partial

import torch
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import BatchSampler, DataLoader, Dataset, RandomSampler

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def pad_collate(batch, pad_id=0):
    feats, tokens = zip(*batch)
    lengths = torch.tensor([f.size(0) for f in feats])
    return pad_sequence(feats, batch_first=True), lengths, pad_sequence(tokens, batch_first=True, padding_value=pad_id)


class Utterances(Dataset):
    def __init__(self, items):
        self.items = items

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]

    def loader(self, batch_size):
        return [self.items[i:i + batch_size] for i in range(0, len(self.items), batch_size)]  # clean


def make_loaders(train_ds, val_ds, cfg, loader_kwargs):
    sampler = BatchSampler(RandomSampler(train_ds), batch_size=cfg.batch_size, drop_last=True)
    train = DataLoader(train_ds, batch_sampler=sampler, collate_fn=pad_collate, num_workers=8)  # expect: TL405
    val = DataLoader(val_ds, batch_size=64, collate_fn=partial(pad_collate, pad_id=cfg.pad_id))  # expect: TL405
    debug = {split: DataLoader(ds, batch_size=4, num_workers=0, pin_memory=True)  # expect: TL405
             for split, ds in (("train", train_ds), ("val", val_ds))}
    test = DataLoader(val_ds, batch_size=64, collate_fn=pad_collate, num_workers=cfg.workers, pin_memory=True)  # clean
    extra = DataLoader(val_ds, collate_fn=pad_collate, **loader_kwargs)  # clean
    return train, val, debug, test, extra


def run_epoch(model, loader, optimizer):
    model.train()
    for feats, lengths, tokens in loader:
        feats, tokens = feats.to(device), tokens.to(device)
        loss = model(feats, lengths, tokens)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

"""Batches have shapes: `for x, y in loader` over a `DataLoader` built in the file, through
`torch-lsp shapes --format json` run as a subprocess."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

SOURCE = textwrap.dedent('''\
    import torch
    from torch.utils.data import DataLoader, Dataset, TensorDataset


    class Digits(Dataset):
        def __len__(self):
            return 100

        def __getitem__(self, index):
            return torch.randn(1, 28, 28), 3


    def train(batch_size):
        loader = DataLoader(Digits(), batch_size=batch_size, shuffle=True, drop_last=True)
        for x, y in loader:
            pass


    def remainder():
        loader = DataLoader(Digits(), batch_size=32)
        for x, y in loader:
            pass


    def divisible():
        features = torch.randn(64, 5)
        for rows, in DataLoader(TensorDataset(features), batch_size=16):
            pass
        first = next(iter(DataLoader(TensorDataset(features, features.sum(1)), batch_size=8)))


    def custom_collate(items):
        loader = DataLoader(Digits(), batch_size=4, drop_last=True, collate_fn=lambda b: b)
        for x in loader:
            pass
''')


def shapes(cli, tmp_path: Path) -> dict:
    (tmp_path / "data.py").write_text(SOURCE, encoding="utf-8")
    completed = cli("shapes", "data.py", "--format", "json", cwd=tmp_path)
    assert completed.returncode == 0, completed.stderr
    return {(r["line"], r["name"]): r["shape"] for r in json.loads(completed.stdout)}


def test_batches_of_a_dataset_class_and_of_tensor_datasets(cli, tmp_path: Path):
    found = shapes(cli, tmp_path)
    # drop_last: every batch has `batch_size` items, named after what sizes it.
    assert found[(15, "x")] == ["batch_size", 1, 28, 28]
    assert found[(15, "y")] == ["batch_size"]
    # 100 items in batches of 32: the last batch has 4, so the batch dim is not one size.
    assert found[(21, "x")] == ["?", 1, 28, 28]
    # 64 rows in batches of 16: every batch is full.
    assert found[(27, "rows")] == [16, 5]
    assert (29, "first") not in found  # a tuple, not a tensor binding
    # A custom collate_fn decides what a batch is: nothing is claimed.
    assert (35, "x") not in found

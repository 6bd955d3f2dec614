"""TL405 follows a dataset class into the workspace file that defines it, also when the class
is reached through an imported module (`from rl.algo import expert` then
`expert.ExpertDataset(...)`): an in-memory dataset there has no loading work for workers.
Checked with the real CLI on a small project."""
from __future__ import annotations

from tests.test_cli import write

DATASETS = """\
import torch
from PIL import Image
from torch.utils.data import Dataset


class ExpertDataset(Dataset):
    \"\"\"Expert trajectories held in memory: items are indexed, nothing is loaded.\"\"\"

    def __init__(self, file_name):
        trajectories = torch.load(file_name, weights_only=True)
        self.states, self.actions = trajectories["states"], trajectories["actions"]
        self.index = [(t, i) for t in range(len(self.states)) for i in range(len(self.states[t]))]

    def __len__(self):
        return len(self.index)

    def __getitem__(self, i):
        trajectory, step = self.index[i]
        return self.states[trajectory][step], self.actions[trajectory][step]


class FramesOnDisk(Dataset):
    def __init__(self, paths):
        self.paths = paths

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        return Image.open(self.paths[i])
"""

TRAIN = """\
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

from rl.algo import expert

device = torch.device("cuda")
discriminator = torch.nn.Linear(16, 1).to(device)
optimizer = torch.optim.Adam(discriminator.parameters())
in_memory = DataLoader(expert.ExpertDataset("experts.pt"), batch_size=128, shuffle=True)
{on_disk}
for loader in (in_memory, on_disk):
    for states, actions in loader:
        states = states.to(device)
        optimizer.zero_grad()
        F.softplus(discriminator(states)).mean().backward()
        optimizer.step()
"""


def _tl405_lines(tmp_path, cli) -> list[int]:
    import json

    completed = cli("check", "--format", "json", "--select", "TL405", "train.py", cwd=tmp_path)
    assert completed.returncode in (0, 1), completed.stderr
    return sorted(item["line"] for item in json.loads(completed.stdout) if item["code"] == "TL405")


def test_in_memory_dataset_reached_through_a_module_is_not_flagged(tmp_path, cli):
    write(tmp_path, {
        "rl/__init__.py": "", "rl/algo/__init__.py": "", "rl/algo/expert.py": DATASETS,
        "train.py": TRAIN.format(on_disk='on_disk = DataLoader(expert.FramesOnDisk(["a.png"]), batch_size=8)'),
    })
    assert _tl405_lines(tmp_path, cli) == [11]  # the frames read from disk, not the expert trajectories


COLLATE = """\
import torch


def create_collate_fn():
    def collate_fn(batch):
        return {"input_ids": torch.tensor([item["input_ids"] for item in batch])}

    return collate_fn


def stack_batch(batch):
    return torch.stack(batch)


def create_stacker():
    return stack_batch
"""

PACKED = """\
from torch.utils.data import DataLoader

from utils import create_collate_fn, create_stacker


def loaders(dataset):
    packed = DataLoader(dataset, batch_size=1, collate_fn=create_collate_fn())
    stacked = DataLoader(dataset, batch_size=1, collate_fn=create_stacker())
    return packed, stacked
"""


def test_collate_closure_from_an_imported_factory_is_not_flagged(tmp_path, cli):
    """`collate_fn=create_collate_fn()` of a workspace module that returns a nested function:
    spawned workers cannot pickle it, so `num_workers` is no drop-in (accelerate's examples)."""
    write(tmp_path, {"utils.py": COLLATE, "train.py": PACKED})
    assert _tl405_lines(tmp_path, cli) == [8]  # the module-level stacker pickles by name

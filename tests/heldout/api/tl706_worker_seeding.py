"""TL706 probe: worker seeding through the private `torch.utils.data._utils.worker` module
(the import by name and its use), against the public `torch.utils.data.get_worker_info`."""
import random

import numpy as np
import torch
from torch.utils.data._utils.worker import get_worker_info  # expect: TL706


def seed_worker(worker_id):
    info = get_worker_info()  # expect: TL706
    seed = (info.seed if info is not None else torch.initial_seed()) % 2**32
    np.random.seed(seed)
    random.seed(seed)


def shard_for_worker(files):
    info = torch.utils.data.get_worker_info()  # clean
    if info is None:
        return files
    return files[info.id :: info.num_workers]


class ShardedFiles(torch.utils.data.IterableDataset):
    def __init__(self, files):
        self.files = files

    def __iter__(self):
        for path in shard_for_worker(self.files):
            yield torch.load(path, weights_only=True)

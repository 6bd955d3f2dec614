"""TL706 probe: a point-cloud collate that calls `default_collate` and `default_convert`
through their private `torch.utils.data._utils.collate` path, against the public
`torch.utils.data` names imported by name."""
import torch
from torch.utils.data import default_collate, default_convert


def pointcloud_collate(batch):
    points = [torch.as_tensor(sample.pop("points")) for sample in batch]
    rest = torch.utils.data._utils.collate.default_collate(batch)  # expect: TL706
    rest["points"] = torch.nn.utils.rnn.pad_sequence(points, batch_first=True)
    rest["num_points"] = torch.tensor([len(p) for p in points])
    return rest


def numpy_meta(meta):
    return torch.utils.data._utils.collate.default_convert(meta)  # expect: TL706


def pointcloud_collate_v2(batch):
    points = [torch.as_tensor(sample.pop("points")) for sample in batch]
    rest = default_collate(batch)  # clean
    rest["points"] = torch.nn.utils.rnn.pad_sequence(points, batch_first=True)
    return rest


def numpy_meta_v2(meta):
    return default_convert(meta)  # clean

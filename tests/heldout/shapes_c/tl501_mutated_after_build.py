"""TL501 probe, near misses: shapes changed after construction, as fine-tuning and experiment
scripts do: a dataclass config field overwritten (by attribute, `setattr`, `dataclasses.replace`)
before the model is built, a dict config updated, a classifier head swapped
(`model.fc = nn.Linear(model.fc.in_features, n)`), the last layer of a `Sequential` replaced by
index or appended to, a `reset_classifier` method, and in-place `unsqueeze_`/`t_`; with one real
bug: the swapped head fed features of the old width.
Each `case_*` function runs with torch (tests/shapes/test_definite_errors_runtime.py)."""
import dataclasses
from dataclasses import dataclass

import torch
import torch.nn as nn


@dataclass
class MLPConfig:
    in_dim: int = 32
    hidden: int = 64
    out_dim: int = 10


class MLP(nn.Module):
    def __init__(self, cfg: MLPConfig):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(cfg.in_dim, cfg.hidden), nn.ReLU())
        self.fc = nn.Linear(cfg.hidden, cfg.out_dim)

    def reset_classifier(self, num_classes, width=None):
        self.fc = nn.Linear(width or self.fc.in_features, num_classes)

    def forward(self, x):
        return self.fc(self.body(x))  # clean


def case_config_field_overwritten():
    cfg = MLPConfig()
    cfg.in_dim = 48
    return MLP(cfg)(torch.randn(4, 48))  # clean


def case_config_setattr_and_replace():
    cfg = MLPConfig()
    setattr(cfg, "in_dim", 20)
    wide = dataclasses.replace(cfg, hidden=128)
    return MLP(cfg)(torch.randn(4, 20)) + MLP(wide)(torch.randn(4, 20))  # clean


def case_dict_config_updated():
    config = {"in_dim": 32, "hidden": 64}
    config.update(in_dim=16)
    config["hidden"] = 8
    layer = nn.Linear(config["in_dim"], config["hidden"])
    return layer(torch.randn(2, 16))  # clean


def case_head_swapped():
    model = MLP(MLPConfig())
    model.fc = nn.Linear(model.fc.in_features, 3)
    return model(torch.randn(4, 32)) + torch.zeros(4, 3)  # clean


def case_head_swapped_wrong_width():
    model = MLP(MLPConfig())
    model.fc = nn.Linear(128, 3)
    return model.fc(model.body(torch.randn(4, 32)))  # expect: TL501


def case_reset_classifier():
    model = MLP(MLPConfig())
    model.body = nn.Sequential(nn.Linear(32, 256), nn.GELU())
    model.reset_classifier(5, width=256)
    return model(torch.randn(4, 32)) + torch.zeros(4, 5)  # clean


def case_sequential_last_layer_replaced():
    net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 10))
    net[-1] = nn.Linear(32, 4)
    net.append(nn.Linear(4, 2))
    return net(torch.randn(3, 16)) + torch.zeros(3, 2)  # clean


def case_inplace_shape_changes():
    x = torch.randn(8, 5)
    x.unsqueeze_(1)                       # (8, 1, 5)
    w = torch.randn(5, 7)
    w.t_()                                # (7, 5)
    return x @ w.T  # clean

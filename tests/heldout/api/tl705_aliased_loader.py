"""TL705 probe: `torch.load` reached through `from torch import load as torch_load` and on an
in-memory buffer, against an explicit `weights_only=False` for a trusted full pickle and
`numpy.load`."""
import io

import numpy as np
from torch import load as torch_load


def restore_ema(ema_model, path):
    ema_model.load_state_dict(torch_load(path, map_location="cpu"))  # expect: TL705
    return ema_model


def from_blob(blob: bytes):
    buffer = io.BytesIO(blob)
    return torch_load(buffer, map_location="cpu")  # expect: TL705


def restore_full_run(path):
    # our own run directory: the pickled config object is needed, the file is trusted
    return torch_load(path, map_location="cpu", weights_only=False)  # clean


def load_embeddings(path):
    return np.load(path, allow_pickle=False)  # clean

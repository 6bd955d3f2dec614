"""TL705 probe: a model-serving registry that loads checkpoints with `torch.load(path,
map_location="cpu")`, through a lambda used as a loader callback, and with a `map_location`
function; near misses are a custom `pickle_module` (a deliberate full unpickler, which
`weights_only=True` would reject), and loads that pass `weights_only=True` with `mmap=True`, pass `weights_only`
from the config (the caller decides), `torch.hub.load_state_dict_from_url`
(not `torch.load`), `torch.jit.load`, and a `load` method of the registry itself."""
import dill
import torch


class Registry:
    def __init__(self, cfg):
        self.cfg = cfg
        self.loaders = {
            "pt": lambda p: torch.load(p),  # expect: TL705
            "ts": torch.jit.load,  # clean
        }

    def load(self, name):
        return self.loaders[name.rsplit(".", 1)[-1]](name)  # clean

    def load_full(self, path):
        return torch.load(path, map_location="cpu")  # expect: TL705

    def load_to_gpu(self, path, rank):
        return torch.load(path, map_location=lambda storage, loc: storage.cuda(rank))  # expect: TL705

    def load_weights(self, path):
        return torch.load(path, map_location="cpu", weights_only=True, mmap=True)  # clean

    def load_configured(self, path):
        return torch.load(path, weights_only=self.cfg.weights_only)  # clean

    def load_dill(self, path):
        return torch.load(path, pickle_module=dill)  # clean

    def load_remote(self, url):
        return torch.hub.load_state_dict_from_url(url, map_location="cpu")  # clean

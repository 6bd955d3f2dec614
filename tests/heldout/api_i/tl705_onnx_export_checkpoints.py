"""TL705 probe: an export script turning training checkpoints into ONNX and TorchScript: the
checkpoint dict loaded with `torch.load(path, map_location="cpu")`, calibration statistics loaded
with a bare `torch.load(...)`, and a whole pickled model loaded and put in eval mode; near misses
are `weights_only=True` loads, `torch.jit.load` of a TorchScript archive, `onnx.load`,
safetensors' `load_file`, and a load through an explicit `pickle_module` (the caller's choice)."""
import argparse

import dill
import onnx
import torch
from safetensors.torch import load_file


def load_state(path):
    ckpt = torch.load(path, map_location="cpu")  # expect: TL705
    return ckpt["model"] if "model" in ckpt else ckpt


def load_state_safe(path):
    ckpt = torch.load(path, map_location="cpu", weights_only=True)  # clean
    return ckpt["model"] if "model" in ckpt else ckpt


def load_calibration(path):
    stats = torch.load(path)  # expect: TL705
    return {name: (s["min"], s["max"]) for name, s in stats.items()}


def load_pickled_model(path):
    model = torch.load(path, map_location="cpu")  # expect: TL705
    model.eval()
    return model


def load_legacy_pickle(path):
    return torch.load(path, map_location="cpu", pickle_module=dill)  # clean


def export(model, example, onnx_path, ts_path):
    model.eval()
    torch.onnx.export(model, (example,), onnx_path, input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}}, opset_version=17)
    onnx.checker.check_model(onnx.load(onnx_path))  # clean
    torch.jit.save(torch.jit.trace(model, example), ts_path)
    return torch.jit.load(ts_path)  # clean


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--weights")
    ap.add_argument("--safetensors")
    args = ap.parse_args()
    state = load_file(args.safetensors) if args.safetensors else load_state_safe(args.weights)  # clean
    return state


if __name__ == "__main__":
    main()

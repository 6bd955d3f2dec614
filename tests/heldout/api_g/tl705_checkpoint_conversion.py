"""TL705 probe: a checkpoint-conversion CLI (an old training checkpoint to a HF-style
`pytorch_model.bin` / safetensors): `torch.load(args.src, map_location="cpu")` on the user's
file, a `torch.load(f)` on a file object opened in a `with`, and `torch.load(io.BytesIO(blob))`
on bytes fetched from an object store; near misses are `weights_only=True`, an explicit
`weights_only=False` for a trusted legacy pickle (a decision on record), `safetensors`'
`load_file`, `torch.jit.load` of a TorchScript export, and `torch.export.load`."""
import argparse
import io

import torch
from safetensors.torch import load_file, save_file


def fetch_blob(bucket, key) -> bytes:
    return bucket.get_object(key).read()


def convert(args):
    ckpt = torch.load(args.src, map_location="cpu")  # expect: TL705
    state = ckpt.get("model", ckpt)
    state = {k.removeprefix("module."): v.contiguous() for k, v in state.items()}
    save_file(state, args.dst)


def convert_from_file(path, dst):
    with open(path, "rb") as f:
        state = torch.load(f)  # expect: TL705
    torch.save(state, dst)


def convert_from_store(bucket, key, dst):
    state = torch.load(io.BytesIO(fetch_blob(bucket, key)), map_location="cpu")  # expect: TL705
    save_file(state, dst)


def convert_trusted(path, dst):
    state = torch.load(path, map_location="cpu", weights_only=False)  # clean
    save_file(state["state_dict"], dst)


def verify(src, dst):
    a = torch.load(src, map_location="cpu", weights_only=True)  # clean
    b = load_file(dst)  # clean
    return all(torch.equal(a[k], b[k]) for k in b)


def check_exports(ts_path, ep_path):
    scripted = torch.jit.load(ts_path, map_location="cpu")  # clean
    exported = torch.export.load(ep_path)  # clean
    return scripted, exported


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("src")
    parser.add_argument("dst")
    convert(parser.parse_args())

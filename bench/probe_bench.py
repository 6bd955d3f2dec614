"""`python -m bench.probe_bench`: the shape probe's figures, printed, never asserted.

  * cold start: from spawning the worker to its greeting (torch imported, meta warmed up);
  * warm probes, p50 / p95: a GPT block and a ResNet-18 (written here, tiny inputs);
  * the server's hover latency while a probe is starting, against the same without the probe.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.lsp_client import LspClient
from bench.server_bench import CLIENT_CAPABILITIES, SERVER_COMMAND, WAIT_S
from torch_lsp.shapes.probe.client import ProbeClient, ProbeOptions

GPT_BLOCK = '''
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, width=384, heads=6):
        super().__init__()
        self.ln1 = nn.LayerNorm(width)
        self.attention = nn.MultiheadAttention(width, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attention(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))
'''

RESNET18 = '''
import torch
import torch.nn as nn


class Basic(nn.Module):
    def __init__(self, inputs, outputs, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(inputs, outputs, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(outputs)
        self.conv2 = nn.Conv2d(outputs, outputs, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(outputs)
        self.skip = nn.Sequential()
        if stride != 1 or inputs != outputs:
            self.skip = nn.Sequential(nn.Conv2d(inputs, outputs, 1, stride, bias=False), nn.BatchNorm2d(outputs))

    def forward(self, x):
        out = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(out)) + self.skip(x))


class ResNet18(nn.Module):
    def __init__(self, classes=1000):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                                  nn.MaxPool2d(3, 2, 1))
        widths = [(64, 64, 1), (64, 128, 2), (128, 256, 2), (256, 512, 2)]
        self.stages = nn.Sequential(*[nn.Sequential(Basic(i, o, s), Basic(o, o, 1)) for i, o, s in widths])
        self.head = nn.Linear(512, classes)

    def forward(self, x):
        x = self.stages(self.stem(x))
        return self.head(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))
'''

SERVED = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3 * 32 * 32, 10)

    def forward(self, x):
        h = x.flatten(1)
        return self.fc(h)


images = torch.randn(8, 3, 32, 32)
logits = Net()(images)
'''


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def cold_starts(runs: int, device: str) -> list[float]:
    samples = []
    for _ in range(runs):
        client = ProbeClient(sys.executable, ProbeOptions(device=device))
        started = time.perf_counter()
        client.start()
        samples.append(time.perf_counter() - started)
        client.close()
    return samples


def warm_probes(folder: Path, source: str, target: str, shape: list[int], runs: int, device: str) -> list[float]:
    path = folder / f"{target.lower()}.py"
    path.write_text(source)
    client = ProbeClient(sys.executable, ProbeOptions(device=device, timeout=60))
    try:
        client.start()
        samples = []
        for _ in range(runs):
            started = time.perf_counter()
            answer = client.probe({"op": "probe", "path": str(path), "source": source, "roots": [target],
                                   "init": f"{target}()", "inputs": [{"shape": shape, "batch_dim": 0}]})
            samples.append(time.perf_counter() - started)
            if not answer.get("ok"):
                raise RuntimeError(f"the probe of {target} failed: {answer}")
            if answer.get("device") != device:
                raise RuntimeError(f"the probe of {target} ran on {answer.get('device')}, not {device}: "
                                   f"{answer.get('note')}")
        return samples
    finally:
        client.close()


def hovers_while_starting(folder: Path, probe: bool, seconds: float = 3.0) -> list[float]:
    """Hover latencies (s) over the first seconds after opening a file, the probe on or off."""
    path = folder / "served.py"
    path.write_text(SERVED)
    client = LspClient(SERVER_COMMAND, stderr_path=folder / "server.log", cwd=folder)
    options = {"probe": {"enabled": True, "python": sys.executable}} if probe else {}
    client.request("initialize", {"processId": None, "rootUri": folder.as_uri(), "capabilities": CLIENT_CAPABILITIES,
                                  "initializationOptions": options}, WAIT_S)
    client.notify("initialized", {})
    uri = path.as_uri()
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                            "text": SERVED}})
    line = SERVED.split("\n").index("logits = Net()(images)")
    samples = []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        sent = time.perf_counter()
        answer = client.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                       "position": {"line": line, "character": 1}}, WAIT_S)
        samples.append(answer.at - sent)
        time.sleep(0.05)
    client.shutdown()
    return samples


def row(name: str, samples: list[float]) -> str:
    return (f"{name:<44} p50 {statistics.median(samples) * 1000:8.1f} ms   "
            f"p95 {percentile(samples, 0.95) * 1000:8.1f} ms   (n={len(samples)})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.probe_bench", description=__doc__.split("\n")[0])
    parser.add_argument("--device", choices=("meta", "cpu", "cuda"), default="meta",
                        help="where the probed models run (the setting probe.device); cuda needs a GPU")
    device = parser.parse_args(argv).device
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        print(row(f"probe worker cold start ({device})", cold_starts(3, device)))
        print(row(f"warm probe, GPT block [8, 128, 384] ({device})",
                  warm_probes(folder, GPT_BLOCK, "Block", [8, 128, 384], 30, device)))
        print(row(f"warm probe, ResNet-18 [8, 3, 224, 224] ({device})",
                  warm_probes(folder, RESNET18, "ResNet18", [8, 3, 224, 224], 30, device)))
        print(row("hover, probe off", hovers_while_starting(folder, probe=False)))
        print(row("hover while the probe starts", hovers_while_starting(folder, probe=True)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

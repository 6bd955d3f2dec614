"""TL408 probe: a script that switches anomaly detection on in its `if __name__ == "__main__":`
block (no debug flag: it stays on for the whole run) and wraps the backward in
`detect_anomaly()` inside the epoch loop, against both behind `args.debug`."""
import argparse

import torch
import torch.nn as nn


def train(model, loader, epochs, debug=False):
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    model.train()
    for epoch in range(epochs):
        for x, y in loader:
            loss = nn.functional.smooth_l1_loss(model(x), y)
            opt.zero_grad(set_to_none=True)
            with torch.autograd.detect_anomaly():  # expect: TL408
                loss.backward()
            opt.step()
        if debug:
            with torch.autograd.detect_anomaly():  # clean
                nn.functional.smooth_l1_loss(model(x), y).backward()


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--debug", action="store_true")
    args = p.parse_args()
    torch.autograd.set_detect_anomaly(True)  # expect: TL408
    if args.debug:
        torch.autograd.set_detect_anomaly(True, check_nan=True)  # clean
    net = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 1))
    data = [(torch.randn(32, 16), torch.randn(32, 1)) for _ in range(200)]
    train(net, data, epochs=5, debug=args.debug)

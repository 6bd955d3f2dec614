"""Evaluate a trained forecaster, quantize it dynamically and export it to ONNX."""
import argparse

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class Forecaster(nn.Module):
    def __init__(self, n_series, hidden=128, horizon=24):
        super().__init__()
        self.encoder = nn.LSTM(n_series, hidden, num_layers=2, batch_first=True, dropout=0.1)
        self.head = nn.Linear(hidden, horizon * n_series)
        self.horizon, self.n_series = horizon, n_series

    def forward(self, x):
        out, _ = self.encoder(x)
        return self.head(out[:, -1]).reshape(x.size(0), self.horizon, self.n_series)


def windows(series: np.ndarray, window: int, horizon: int):
    idx = np.arange(len(series) - window - horizon)
    xs = np.stack([series[i:i + window] for i in idx]).astype(np.float32)
    ys = np.stack([series[i + window:i + window + horizon] for i in idx]).astype(np.float32)
    return torch.from_numpy(xs), torch.from_numpy(ys)


@torch.inference_mode()
def evaluate(model, loader):
    model.eval()
    abs_err, sq_err, n = 0.0, 0.0, 0
    for x, y in loader:
        pred = model(x)
        abs_err += (pred - y).abs().sum().item()
        sq_err += ((pred - y) ** 2).sum().item()
        n += y.numel()
    return abs_err / n, (sq_err / n) ** 0.5


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--series", required=True)
    ap.add_argument("--weights", required=True)
    ap.add_argument("--onnx", default="forecaster.onnx")
    args = ap.parse_args()

    series = np.load(args.series)
    x, y = windows(series, window=96, horizon=24)
    loader = DataLoader(TensorDataset(x, y), batch_size=256, num_workers=2)

    model = Forecaster(series.shape[1])
    state = torch.load(args.weights, map_location="cpu", weights_only=True)
    model.load_state_dict(state)
    model.eval()
    print("fp32 mae/rmse", evaluate(model, loader))

    qmodel = torch.ao.quantization.quantize_dynamic(model, {nn.LSTM, nn.Linear}, dtype=torch.qint8)
    print("int8 mae/rmse", evaluate(qmodel, loader))

    example = x[:1]
    torch.onnx.export(model, (example,), args.onnx, input_names=["window"], output_names=["forecast"],
                      dynamic_axes={"window": {0: "batch"}, "forecast": {0: "batch"}}, opset_version=17)


if __name__ == "__main__":
    main()

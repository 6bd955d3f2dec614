"""Clean: an export script that loads a fine-tuned checkpoint safely, traces a CTC speech model
to TorchScript and ONNX, and compares the exported outputs with the eager ones."""
import argparse

import numpy as np
import onnxruntime as ort
import torch
import torch.nn as nn


class CTCModel(nn.Module):
    def __init__(self, n_mels=80, dim=256, vocab=32):
        super().__init__()
        self.conv = nn.Conv1d(n_mels, dim, 3, stride=2, padding=1)
        self.rnn = nn.LSTM(dim, dim, num_layers=2, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * dim, vocab)

    def forward(self, mels):
        x = self.conv(mels).transpose(1, 2)
        x, _ = self.rnn(x)
        return self.head(x).log_softmax(dim=-1)


def load(path):
    model = CTCModel()
    state = torch.load(path, map_location="cpu", weights_only=True)
    missing, unexpected = model.load_state_dict(state["model"], strict=False)
    if missing or unexpected:
        raise KeyError(f"missing={missing} unexpected={unexpected}")
    return model.eval()


@torch.inference_mode()
def export(model, out_prefix, frames=400):
    model.eval()
    example = torch.randn(1, 80, frames)
    traced = torch.jit.trace(model, example)
    traced.save(f"{out_prefix}.pt")
    torch.onnx.export(model, (example,), f"{out_prefix}.onnx", input_names=["mels"], output_names=["log_probs"],
                      dynamic_axes={"mels": {0: "batch", 2: "frames"}, "log_probs": {0: "batch", 1: "steps"}})
    eager = model(example).numpy()
    session = ort.InferenceSession(f"{out_prefix}.onnx", providers=["CPUExecutionProvider"])
    onnx_out = session.run(None, {"mels": example.numpy()})[0]
    ts_out = traced(example).numpy()
    return float(np.abs(eager - onnx_out).max()), float(np.abs(eager - ts_out).max())


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("checkpoint")
    parser.add_argument("--out", default="ctc")
    args = parser.parse_args()
    print("max abs diff (onnx, torchscript):", export(load(args.checkpoint), args.out))

"""TL403 probe: an embedding extractor that grows a feature bank with
`torch.cat((bank, emb.cpu()), dim=0)` (tuple form) over a loader, a streaming ASR
evaluator that grows its transcript tensor with `torch.cat` per chunk, and segments joined with
a separator made by `joined.new_zeros(...)` (it reads the accumulator's dtype, not its data);
near misses are a DenseNet block (each layer's input is the concatenation so far: the growth is the computation
itself), a fixed-size sliding context (`cat([ctx[:, 1:], new], 1)` drops as much as it adds),
and concatenating each batch's two views once (not an accumulator)."""
import torch
import torch.nn as nn


class DenseBlock(nn.Module):
    def __init__(self, in_ch, growth, n_layers):
        super().__init__()
        self.layers = nn.ModuleList(
            nn.Sequential(nn.BatchNorm2d(in_ch + i * growth), nn.ReLU(), nn.Conv2d(in_ch + i * growth, growth, 3, padding=1))
            for i in range(n_layers)
        )

    def forward(self, x):
        for layer in self.layers:
            x = torch.cat([x, layer(x)], dim=1)  # clean
        return x


@torch.no_grad()
def extract(encoder, loader, device):
    encoder.eval()
    bank = torch.empty(0, encoder.dim)
    for images, _ in loader:
        emb = encoder(images.to(device))
        bank = torch.cat((bank, emb.cpu()), dim=0)  # expect: TL403
    return bank


@torch.no_grad()
def stream_decode(model, chunks, context=16):
    model.eval()
    ctx = torch.zeros(1, context, model.dim)
    tokens = torch.empty(0, dtype=torch.long)
    for chunk in chunks:
        feats = model.encode(chunk)
        ctx = torch.cat([ctx[:, feats.size(1):], feats], dim=1)  # clean
        step_tokens = model.decode(ctx).argmax(-1)[0, -feats.size(1):]
        tokens = torch.cat([tokens, step_tokens])  # expect: TL403
    return tokens


def join_segments(segments, width):
    joined = torch.empty(0, width)
    for segment in segments:
        joined = torch.cat([joined, joined.new_zeros(1, width), segment])  # expect: TL403
    return joined


def two_view_batches(loader, augment):
    for images, labels in loader:
        views = torch.cat([augment(images), augment(images)], dim=0)  # clean
        yield views, labels.repeat(2)

"""TL601 probe: an inference server that compiles a bound method (`self.encode =
torch.compile(self._encode)`) and a seq2seq model whose `forward` is compiled through
`model.compile()` (the `nn.Module.compile` method, torch >= 2.2): in the compiled `forward`, a
`while` loop on `(tokens != eos).any()` and `.tolist()` of the decoded lengths; in the compiled
bound method, a `print` of a tensor statistic; near misses are the eager `_decode` helper's `.tolist()`,
the eager `handle`'s `.cpu().numpy()` handed to a NumPy post-processor, `torch.compiler.is_compiling()` checks,
a `logging` call with a shape, and the uncompiled `_encode`'s twin method `_encode_eager` with the
same `print`."""
import logging

import numpy as np
import torch
import torch.nn as nn

log = logging.getLogger(__name__)


def postprocess(ids: np.ndarray) -> list[list[int]]:
    return [row[row > 0].tolist() for row in ids]


class Seq2Seq(nn.Module):
    def __init__(self, vocab=32000, dim=512, eos=2, max_len=128):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.core = nn.Transformer(dim, 8, 3, 3, batch_first=True)
        self.out = nn.Linear(dim, vocab)
        self.eos = eos
        self.max_len = max_len

    def forward(self, src, bos):
        memory = self.core.encoder(self.embed(src))
        tokens = bos
        step = 0
        while (tokens[:, -1] != self.eos).any() and step < self.max_len:  # expect: TL601
            h = self.core.decoder(self.embed(tokens), memory)
            tokens = torch.cat([tokens, self.out(h[:, -1]).argmax(-1, keepdim=True)], dim=1)
            step += 1
        if not torch.compiler.is_compiling():  # clean
            log.info("decoded shape %s", tokens.shape)  # clean
        lengths = (tokens != self.eos).sum(-1).tolist()  # expect: TL601
        return tokens, lengths


class Server:
    def __init__(self, encoder: nn.Module, cfg: dict):
        self.encoder = encoder.eval()
        self.seq2seq = Seq2Seq(**cfg).eval()
        self.seq2seq.compile(mode="max-autotune")
        self.encode = torch.compile(self._encode)

    def _encode(self, batch):
        feats = self.encoder(batch)
        print("encoded", feats.norm(dim=-1).mean())  # expect: TL601
        return feats

    def _encode_eager(self, batch):
        feats = self.encoder(batch)
        print("encoded", feats.norm(dim=-1).mean())  # clean
        return feats

    def _decode(self, ids):
        return ids.tolist()  # clean

    @torch.inference_mode()
    def handle(self, batch, bos):
        tokens, lengths = self.seq2seq(self.encode(batch), bos)
        return postprocess(tokens.cpu().numpy()), lengths  # clean

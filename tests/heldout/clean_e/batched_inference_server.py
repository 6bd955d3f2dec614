"""Clean: a batched sentiment inference server: requests are queued, padded into one batch,
scored once under `inference_mode`, and answered; the model is loaded from a weights-only
checkpoint, put in eval mode, and moved to the device once."""
import asyncio
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pad_sequence


class SentimentNet(nn.Module):
    def __init__(self, vocab=30000, dim=256, n_classes=3, drop=0.2):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=0)
        self.encoder = nn.GRU(dim, dim, batch_first=True, bidirectional=True)
        self.drop = nn.Dropout(drop)
        self.head = nn.Linear(2 * dim, n_classes)

    def forward(self, ids, lengths):
        x = self.embed(ids)
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        _, h = self.encoder(packed)
        h = torch.cat([h[-2], h[-1]], dim=-1)
        return self.head(self.drop(h))


@dataclass
class Request:
    ids: torch.Tensor
    future: asyncio.Future


class Server:
    def __init__(self, path, device, max_batch=64, max_wait=0.01):
        self.device = torch.device(device)
        model = SentimentNet()
        model.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
        self.model = model.to(self.device).eval()
        self.queue: asyncio.Queue[Request] = asyncio.Queue()
        self.max_batch, self.max_wait = max_batch, max_wait

    async def submit(self, ids):
        future = asyncio.get_running_loop().create_future()
        await self.queue.put(Request(torch.as_tensor(ids, dtype=torch.long), future))
        return await future

    async def run(self):
        while True:
            batch = [await self.queue.get()]
            deadline = asyncio.get_running_loop().time() + self.max_wait
            while len(batch) < self.max_batch:
                timeout = deadline - asyncio.get_running_loop().time()
                if timeout <= 0:
                    break
                try:
                    batch.append(await asyncio.wait_for(self.queue.get(), timeout))
                except asyncio.TimeoutError:
                    break
            probs = self.score([r.ids for r in batch])
            for request, p in zip(batch, probs):
                request.future.set_result(p)

    @torch.inference_mode()
    def score(self, sequences):
        lengths = torch.tensor([len(s) for s in sequences])
        ids = pad_sequence(sequences, batch_first=True).to(self.device, non_blocking=True)
        probs = F.softmax(self.model(ids, lengths), dim=-1)
        return probs.cpu().tolist()

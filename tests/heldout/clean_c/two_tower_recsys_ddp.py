"""Clean script: a two-tower retrieval model trained with in-batch negatives (sampled-softmax
with a log-Q correction) on user/item interaction logs, runnable alone or under torchrun: DDP
guarded by `WORLD_SIZE`, a `DistributedSampler` when distributed, bf16 autocast, `all_gather`
of item embeddings for more negatives, gradient accumulation, periodic recall@k evaluation
against the full item table under `torch.no_grad()`, and rank-0 checkpointing.
No rule may fire."""
import argparse
import logging
import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

log = logging.getLogger(__name__)


class Interactions(Dataset):
    def __init__(self, path):
        data = np.load(path)
        self.users = torch.from_numpy(data["user"]).long()
        self.items = torch.from_numpy(data["item"]).long()
        self.log_q = torch.from_numpy(data["item_log_prob"]).float()

    def __len__(self):
        return self.users.numel()

    def __getitem__(self, i):
        return self.users[i], self.items[i], self.log_q[self.items[i]]


class Tower(nn.Module):
    def __init__(self, n_ids, dim=128, hidden=256, out=64):
        super().__init__()
        self.embed = nn.Embedding(n_ids, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.LayerNorm(hidden), nn.Linear(hidden, out))

    def forward(self, ids):
        return F.normalize(self.mlp(self.embed(ids)), dim=-1)


class TwoTower(nn.Module):
    def __init__(self, n_users, n_items, out=64, temperature=0.05):
        super().__init__()
        self.user_tower = Tower(n_users, out=out)
        self.item_tower = Tower(n_items, out=out)
        self.temperature = temperature

    def forward(self, users, items):
        return self.user_tower(users), self.item_tower(items)


def gather_items(item_emb, log_q):
    if not (dist.is_available() and dist.is_initialized()):
        return item_emb, log_q
    emb_list = [torch.empty_like(item_emb) for _ in range(dist.get_world_size())]
    q_list = [torch.empty_like(log_q) for _ in range(dist.get_world_size())]
    dist.all_gather(emb_list, item_emb.detach())
    dist.all_gather(q_list, log_q)
    emb_list[dist.get_rank()] = item_emb
    return torch.cat(emb_list), torch.cat(q_list)


def in_batch_loss(user_emb, item_emb, log_q, temperature, offset):
    logits = user_emb @ item_emb.T / temperature - log_q.unsqueeze(0)
    labels = torch.arange(user_emb.size(0), device=user_emb.device) + offset
    return F.cross_entropy(logits, labels)


@torch.no_grad()
def recall_at_k(model, users, held_out_items, n_items, device, k=50, chunk=4096):
    model.eval()
    item_ids = torch.arange(n_items, device=device)
    table = torch.cat([model.item_tower(item_ids[i:i + chunk]) for i in range(0, n_items, chunk)])
    hits = 0
    for start in range(0, users.numel(), chunk):
        u = model.user_tower(users[start:start + chunk].to(device))
        top = (u @ table.T).topk(k, dim=-1).indices
        hits += (top == held_out_items[start:start + chunk].to(device).unsqueeze(1)).any(dim=1).sum().item()
    return hits / max(users.numel(), 1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--train", required=True)
    p.add_argument("--valid", required=True)
    p.add_argument("--n-users", type=int, required=True)
    p.add_argument("--n-items", type=int, required=True)
    p.add_argument("--batch-size", type=int, default=4096)
    p.add_argument("--accum", type=int, default=2)
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--ckpt", default="two_tower.pt")
    args = p.parse_args()

    distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
    if distributed:
        dist.init_process_group("nccl")
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    is_main = not distributed or dist.get_rank() == 0
    logging.basicConfig(level=logging.INFO if is_main else logging.WARNING)

    dataset = Interactions(args.train)
    sampler = DistributedSampler(dataset, shuffle=True) if distributed else None
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler, shuffle=sampler is None,
                        num_workers=4, pin_memory=True, drop_last=True)
    valid = np.load(args.valid)
    valid_users = torch.from_numpy(valid["user"]).long()
    valid_items = torch.from_numpy(valid["item"]).long()

    model = TwoTower(args.n_users, args.n_items).to(device)
    ddp_model = DistributedDataParallel(model, device_ids=[device.index]) if distributed else model
    optimizer = torch.optim.Adam(ddp_model.parameters(), lr=args.lr)
    rank = dist.get_rank() if distributed else 0

    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        ddp_model.train()
        optimizer.zero_grad(set_to_none=True)
        tic = time.perf_counter()
        for step, (users, items, log_q) in enumerate(loader):
            users = users.to(device, non_blocking=True)
            items = items.to(device, non_blocking=True)
            log_q = log_q.to(device, non_blocking=True)
            with torch.autocast(device_type=device.type, dtype=torch.bfloat16):
                user_emb, item_emb = ddp_model(users, items)
                all_items, all_log_q = gather_items(item_emb.float(), log_q)
                loss = in_batch_loss(user_emb.float(), all_items, all_log_q, model.temperature,
                                     offset=rank * users.size(0))
            (loss / args.accum).backward()
            if (step + 1) % args.accum == 0:
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
            if step % 200 == 0 and is_main:
                log.info("epoch %d step %d loss %.4f (%.1f it/s)", epoch, step, loss.item(),
                         (step + 1) / (time.perf_counter() - tic))
        if is_main:
            r = recall_at_k(model, valid_users, valid_items, args.n_items, device)
            log.info("epoch %d recall@50 %.4f", epoch, r)
            torch.save({"model": model.state_dict(), "epoch": epoch}, args.ckpt)
        if distributed:
            dist.barrier()
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""TL601 probe: autoregressive decoding with compiled pieces: a step compiled under another
name (`fast_step = torch.compile(decode_step, dynamic=True)`) that stops on `if finished:` (a
name bound to a tensor `.all()`) and counts tokens with `int(...)` of a tensor sum, a compiled
fixed-point solver looping `while` on a tensor, and a decorated sampler that reads `.item()`;
against branches on a Python float, on `None` and on `size(-1)`, `masked_fill` and three-argument
`torch.where`, and the very same stopping logic in the eager generation loop."""
import torch
import torch.nn.functional as F


@torch.compile(mode="reduce-overhead")
def sample_next(logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None):
    if temperature <= 0.0:  # clean
        return logits.argmax(dim=-1, keepdim=True)
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):  # clean
        kth = torch.topk(logits, top_k, dim=-1).values[:, -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))  # clean
    probs = F.softmax(logits, dim=-1)
    return torch.multinomial(probs, num_samples=1)


def decode_step(model, idx, eos_id: int, pad_id: int):
    logits = model(idx)[:, -1, :]
    next_id = logits.argmax(dim=-1, keepdim=True)
    done = idx[:, -1:] == eos_id
    next_id = torch.where(done, torch.full_like(next_id, pad_id), next_id)  # clean
    idx = torch.cat([idx, next_id], dim=1)
    finished = (next_id == eos_id).logical_or(done).all()
    if finished:  # expect: TL601
        return idx, True
    n_live = int((next_id != pad_id).sum())  # expect: TL601
    return idx, n_live == 0


fast_step = torch.compile(decode_step, dynamic=True)


@torch.compile
def sinkhorn(cost: torch.Tensor, eps: float = 0.05, tol: float = 1e-3, max_iter: int = 100):
    K = torch.exp(-cost / eps)
    u = torch.ones(cost.size(0), device=cost.device) / cost.size(0)
    v = torch.ones(cost.size(1), device=cost.device) / cost.size(1)
    err = torch.ones((), device=cost.device)
    while err > tol:  # expect: TL601
        u_prev = u
        u = 1.0 / (K @ v)
        v = 1.0 / (K.T @ u)
        err = (u - u_prev).abs().max()
    return u[:, None] * K * v[None, :]


@torch.compile(dynamic=False)
def nucleus_cutoff(probs, top_p=0.9):
    sorted_probs, order = probs.sort(dim=-1, descending=True)
    cumulative = sorted_probs.cumsum(dim=-1)
    cutoff = (cumulative < top_p).sum(dim=-1).max().item()  # expect: TL601
    return sorted_probs[:, : cutoff + 1], order[:, : cutoff + 1]


@torch.no_grad()
def greedy_generate(model, prompt, eos_id, pad_id, max_new_tokens=64):
    model.eval()
    idx = prompt
    for _ in range(max_new_tokens):
        logits = model(idx)[:, -1, :]
        next_id = logits.argmax(dim=-1, keepdim=True)
        idx = torch.cat([idx, next_id], dim=1)
        if (next_id == eos_id).all():  # clean
            break
        if int((next_id != pad_id).sum()) == 0:  # clean
            break
    return idx

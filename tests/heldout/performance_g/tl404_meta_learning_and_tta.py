"""TL404 probe: test-time augmentation and a speech scorer that call the model per sample:
`for i in range(len(batch))` with `model(batch[i].unsqueeze(0))`, and a `range(wavs.shape[0])`
loop calling `asr_model(wavs[i:i + 1])`; near misses are MAML's loop over tasks in a meta-batch
(`range(x_spt.size(0))` where each `x_spt[i]` is a whole support set, and each task needs its
own fast weights, so batching is not the fix), a loop over augmentations of the whole batch,
and a per-sample loop that only slices outputs of one batched call."""
import torch
import torch.nn.functional as F
from torch.func import functional_call


@torch.no_grad()
def tta_predict(model, batch):
    model.eval()
    preds = []
    for i in range(len(batch)):
        x = batch[i].unsqueeze(0)
        preds.append(model(x).softmax(-1))  # expect: TL404
    return torch.cat(preds)


@torch.no_grad()
def tta_flips(model, batch):
    model.eval()
    views = [batch, batch.flip(-1), batch.flip(-2)]
    return torch.stack([model(v).softmax(-1) for v in views]).mean(0)  # clean


@torch.no_grad()
def score_utterances(asr_model, wavs, lengths):
    asr_model.eval()
    scores = []
    for i in range(wavs.shape[0]):
        logits = asr_model(wavs[i:i + 1, : lengths[i]])  # expect: TL404
        scores.append(logits.log_softmax(-1).max(-1).values.mean())
    return torch.stack(scores)


def maml_outer_step(model, meta_opt, x_spt, y_spt, x_qry, y_qry, inner_lr=0.4, inner_steps=1):
    params = dict(model.named_parameters())
    meta_opt.zero_grad(set_to_none=True)
    n_tasks = x_spt.size(0)
    for i in range(n_tasks):
        fast = params
        for _ in range(inner_steps):
            spt_loss = F.cross_entropy(functional_call(model, fast, (x_spt[i],)), y_spt[i])  # clean
            grads = torch.autograd.grad(spt_loss, list(fast.values()), create_graph=True)
            fast = {name: p - inner_lr * g for (name, p), g in zip(fast.items(), grads)}
        qry_loss = F.cross_entropy(functional_call(model, fast, (x_qry[i],)), y_qry[i])  # clean
        (qry_loss / n_tasks).backward()
    meta_opt.step()


def per_sample_margins(model, x, y):
    logits = model(x)  # clean
    margins = []
    for i in range(x.size(0)):
        row = logits[i]
        margins.append(row[y[i]] - row.masked_fill(F.one_hot(y[i], row.numel()).bool(), -1e9).max())
    return torch.stack(margins)

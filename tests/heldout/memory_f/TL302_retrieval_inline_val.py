"""TL302 probe: a CLIP retrieval evaluation that encodes the whole gallery after `.eval()` with grad on,
a seq2seq training loop that validates inline every `eval_every` steps after `model.eval()` without
no_grad (and switches back with `model.train()`), and a speech `predict_batch` helper whose name marks it
as inference; near misses encode the gallery under `torch.inference_mode()`, validate inline under
`torch.no_grad()`, call only the loss module, and compute integrated-gradients attributions that do call
`.backward()`."""
import torch
import torch.nn.functional as F


def recall_at_k(image_enc, text_enc, gallery_loader, queries, k=5):
    image_enc.eval()
    text_enc.eval()
    gallery = []
    for images in gallery_loader:
        gallery.append(F.normalize(image_enc(images), dim=-1))  # expect: TL302
    q = F.normalize(text_enc(queries), dim=-1)  # expect: TL302
    topk = (q @ torch.cat(gallery).T).topk(k, dim=-1).indices
    return topk


def recall_at_k_no_grad(image_enc, text_enc, gallery_loader, queries, k=5):
    image_enc.eval()
    text_enc.eval()
    with torch.inference_mode():
        gallery = torch.cat([F.normalize(image_enc(x), dim=-1) for x in gallery_loader])  # clean
        q = F.normalize(text_enc(queries), dim=-1)  # clean
    return (q @ gallery.T).topk(k, dim=-1).indices


def train_with_inline_val(model, train_loader, val_loader, optimizer, eval_every=1000):
    model.train()
    for step, (src, tgt) in enumerate(train_loader):
        loss = F.cross_entropy(model(src, tgt[:, :-1]).flatten(0, 1), tgt[:, 1:].flatten())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if step % eval_every == 0:
            model.eval()
            val_loss = 0.0
            for vsrc, vtgt in val_loader:
                vlogits = model(vsrc, vtgt[:, :-1])  # expect: TL302
                val_loss += F.cross_entropy(vlogits.flatten(0, 1), vtgt[:, 1:].flatten()).item()
            print(step, val_loss / len(val_loader))
            model.train()


def train_with_inline_val_no_grad(model, train_loader, val_loader, optimizer, eval_every=1000):
    model.train()
    for step, (src, tgt) in enumerate(train_loader):
        loss = F.cross_entropy(model(src, tgt[:, :-1]).flatten(0, 1), tgt[:, 1:].flatten())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if step % eval_every == 0:
            model.eval()
            with torch.no_grad():
                preds = [model(vsrc, vtgt[:, :-1]).argmax(-1) for vsrc, vtgt in val_loader]  # clean
            print(step, len(preds))
            model.train()


def predict_batch(asr_model, feats):
    asr_model.eval()
    log_probs = asr_model(feats).log_softmax(-1)  # expect: TL302
    return log_probs.argmax(-1)


def test_ctc_loss(ctc_loss, log_probs, targets, in_lens, tgt_lens):
    return ctc_loss(log_probs, targets, in_lens, tgt_lens)  # clean


def integrated_gradients(model, x, baseline, target, steps=32):
    model.eval()
    total = torch.zeros_like(x)
    for alpha in torch.linspace(0, 1, steps):
        point = (baseline + alpha * (x - baseline)).requires_grad_(True)
        score = model(point)[:, target].sum()  # clean
        score.backward()
        total += point.grad
    return (x - baseline) * total / steps

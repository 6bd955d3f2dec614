"""TL404 probe: models called one sample at a time over the indices of a batch: a recommender
scoring `model(users[i], items[i])` for `i in range(users.size(0))`, a speaker-verification
embedding loop over `range(B)` after `B, T = wavs.shape` on `wavs[b:b + 1]`, and a segmentation
test-time augmentation that runs the flipped batch at once but the plain images one by one (by
keyword, `x=images[i:i + 1]`); near misses are a
sequence-first recurrent decoder that carries its hidden state from step to step, a loop over the
members of an ensemble (indexing the models, not the batch), and the batched forward."""
import torch
import torch.nn.functional as F


@torch.no_grad()
def score_pairs(model, users, items):
    model.eval()
    scores = []
    for i in range(users.size(0)):
        scores.append(model(users[i], items[i]))  # expect: TL404
    return torch.stack(scores)


@torch.no_grad()
def score_pairs_batched(model, users, items):
    model.eval()
    return model(users, items)  # clean


@torch.no_grad()
def speaker_embeddings(speaker_model, wavs):
    speaker_model.eval()
    B, T = wavs.shape
    embs = []
    for b in range(B):
        embs.append(speaker_model(wavs[b:b + 1]))  # expect: TL404
    return F.normalize(torch.cat(embs), dim=-1)


@torch.no_grad()
def tta_segment(seg_model, images):
    seg_model.eval()
    outs = []
    flipped = seg_model(x=images.flip(-1)).flip(-1)
    for i in range(len(images)):
        plain = seg_model(x=images[i:i + 1])  # expect: TL404
        outs.append((plain + flipped[i:i + 1]) / 2)
    return torch.cat(outs)


@torch.no_grad()
def greedy_decode(decoder, encoder_out, hidden, bos, max_len=100):
    decoder.eval()
    inputs = bos
    tokens = []
    for t in range(max_len):
        logits, hidden = decoder(inputs, hidden, encoder_out)  # clean
        inputs = logits.argmax(-1)
        tokens.append(inputs)
    return torch.stack(tokens)


@torch.no_grad()
def teacher_forced(decoder, targets, hidden, encoder_out):
    decoder.eval()
    outs = []
    for t in range(targets.size(0)):
        out, hidden = decoder(targets[t], hidden, encoder_out)  # clean
        outs.append(out)
    return torch.stack(outs)


@torch.no_grad()
def ensemble_predict(models, x):
    for m in models:
        m.eval()
    probs = [models[i](x).softmax(-1) for i in range(len(models))]  # clean
    return torch.stack(probs).mean(0)

"""TL302 probe: evaluation that builds graphs nobody uses: test-time augmentation after
`model.eval()` averaging flips and crops, a beam search that puts the seq2seq model in eval mode but
not under `no_grad`, an ensemble `evaluate` over checkpoints, a GQA language model scored for
perplexity, and a `validate` function that neither switches mode nor disables grad (both TL103 and
TL302); near misses run under `@torch.inference_mode()`, under `with torch.no_grad():`, on an
encoder frozen with `requires_grad_(False)`, and an attribution pass that needs the input gradient."""
import torch
import torch.nn.functional as F


def predict_tta(model, images):
    model.eval()
    views = [images, images.flip(-1), images.flip(-2)]
    probs = [model(v).softmax(-1) for v in views]  # expect: TL302
    return torch.stack(probs).mean(0)


@torch.inference_mode()
def predict_tta_inference(model, images):
    model.eval()
    views = [images, images.flip(-1), images.flip(-2)]
    probs = [model(v).softmax(-1) for v in views]  # clean
    return torch.stack(probs).mean(0)


def beam_search(model, src, bos, eos, beam=4, max_len=32):
    model.eval()
    hyps = [(torch.tensor([bos], device=src.device), 0.0)]
    for _ in range(max_len):
        new_hyps = []
        for tokens, score in hyps:
            logp = model(src, tokens[None])[0, -1].log_softmax(-1)  # expect: TL302
            top = logp.topk(beam)
            for lp, tok in zip(top.values.tolist(), top.indices.tolist()):
                new_hyps.append((torch.cat([tokens, tokens.new_tensor([tok])]), score + lp))
        hyps = sorted(new_hyps, key=lambda h: h[1], reverse=True)[:beam]
        if all(int(h[0][-1]) == eos for h in hyps):
            break
    return hyps[0][0]


def evaluate_ensemble(members, loader):
    for m in members:
        m.eval()
    correct = total = 0
    for x, y in loader:
        logits = torch.stack([m(x) for m in members]).mean(0)  # expect: TL302
        correct += int((logits.argmax(-1) == y).sum())
        total += y.numel()
    return correct / total


def evaluate_ensemble_no_grad(members, loader):
    for m in members:
        m.eval()
    correct = total = 0
    with torch.no_grad():
        for x, y in loader:
            logits = torch.stack([m(x) for m in members]).mean(0)  # clean
            correct += int((logits.argmax(-1) == y).sum())
            total += y.numel()
    return correct / total


def perplexity(lm, loader):
    lm.eval()
    nll, count = 0.0, 0
    for tokens in loader:
        logits = lm(tokens[:, :-1])  # expect: TL302
        nll += float(F.cross_entropy(logits.flatten(0, 1), tokens[:, 1:].flatten(), reduction="sum"))
        count += tokens[:, 1:].numel()
    return torch.tensor(nll / count).exp()


def validate(model, loader):
    total = 0.0
    for x, y in loader:
        total += float(F.cross_entropy(model(x), y))  # expect: TL103, TL302
    return total / len(loader)


def embed_captions(frozen_encoder, images):
    frozen_encoder.eval()
    frozen_encoder.requires_grad_(False)
    return frozen_encoder(images)  # clean


def saliency(model, images, labels):
    model.eval()
    images = images.clone().requires_grad_(True)
    score = model(images).gather(1, labels[:, None]).sum()  # clean
    (grad,) = torch.autograd.grad(score, images)
    return grad.abs().amax(1)

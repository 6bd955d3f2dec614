"""TL103 probe: a CLIP-style zero-shot classifier scored under `torch.no_grad()` without switching the
image and text towers to eval mode, a CTC speech model transcribing under `@torch.inference_mode()`, and a
graph net's `test()` helper over a full-graph forward; near misses put the model in eval mode first (also
through `self.model.eval()` in a class), call only a loss module and an activation module, and run a
function named `evaluate_...` that does backpropagate (test-time training, not evaluation)."""
import torch
import torch.nn.functional as F
from torch import nn


@torch.no_grad()
def zero_shot_accuracy(image_encoder, text_encoder, loader, class_tokens):
    text_feats = F.normalize(text_encoder(class_tokens), dim=-1)  # expect: TL103
    correct = total = 0
    for images, labels in loader:
        img = F.normalize(image_encoder(images), dim=-1)  # expect: TL103
        correct += (img @ text_feats.T).argmax(-1).eq(labels).sum().item()
        total += labels.numel()
    return correct / total


@torch.no_grad()
def zero_shot_accuracy_eval(image_encoder, text_encoder, loader, class_tokens):
    image_encoder.eval()
    text_encoder.eval()
    text_feats = F.normalize(text_encoder(class_tokens), dim=-1)  # clean
    hits = [(F.normalize(image_encoder(x), dim=-1) @ text_feats.T).argmax(-1).eq(y).sum() for x, y in loader]  # clean
    return torch.stack(hits).sum().item()


@torch.inference_mode()
def transcribe(acoustic_model, waveforms, blank=0):
    log_probs = acoustic_model(waveforms).log_softmax(-1)  # expect: TL103
    best = log_probs.argmax(-1)
    return [torch.unique_consecutive(seq)[torch.unique_consecutive(seq) != blank] for seq in best]


class Transcriber:
    def __init__(self, model: nn.Module):
        self.model = model
        self.ctc = nn.CTCLoss(blank=0, zero_infinity=True)
        self.softmax = nn.LogSoftmax(dim=-1)

    @torch.inference_mode()
    def predict(self, feats):
        self.model.eval()
        return self.softmax(self.model(feats)).argmax(-1)  # clean

    @torch.inference_mode()
    def test_loss(self, log_probs, targets, in_lens, tgt_lens):
        return self.ctc(log_probs, targets, in_lens, tgt_lens)  # clean


def test(gnn, data):
    with torch.no_grad():
        out = gnn(data.x, data.edge_index)  # expect: TL103
    pred = out.argmax(dim=-1)
    return [(pred[m] == data.y[m]).float().mean().item() for m in (data.train_mask, data.val_mask, data.test_mask)]


def evaluate_with_adaptation(model, loader, steps=1):
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    scores = []
    for x, y in loader:
        for _ in range(steps):
            entropy = -(model(x).softmax(-1) * model(x).log_softmax(-1)).sum(-1).mean()  # clean
            opt.zero_grad()
            entropy.backward()
            opt.step()
        scores.append(model(x).argmax(-1).eq(y).float().mean().item())  # clean
    return scores

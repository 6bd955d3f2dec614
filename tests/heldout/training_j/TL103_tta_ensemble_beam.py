"""TL103 probe: evaluation contexts that run a model never put in eval mode: test-time augmentation
under `@torch.no_grad()`, an ensemble averaged over checkpoints under `inference_mode`, a greedy
seq2seq decoder under `no_grad`, an image captioner that puts the frozen encoder in eval mode but
not the decoder, a GNN `test` function, and a notebook-style validation loop after training; near
misses call `.eval()` on each ensemble member, on both captioning models, and before the TTA
forward, and a training step whose teacher forward under `no_grad` is part of training (the loop
calls `.backward()`, so it is no evaluation context)."""
import torch
import torch.nn.functional as F
from torch import nn


@torch.no_grad()
def predict_tta(model, images):
    logits = model(images) + model(images.flip(-1))  # expect: TL103
    return (logits / 2).softmax(-1)


@torch.no_grad()
def predict_tta_eval(model, images):
    model.eval()
    logits = model(images) + model(images.flip(-1))  # clean
    return (logits / 2).softmax(-1)


def ensemble_predict(members, images):
    with torch.inference_mode():
        probs = [member(images).softmax(-1) for member in members]  # expect: TL103
    return torch.stack(probs).mean(0)


def ensemble_predict_eval(members, images):
    for member in members:
        member.eval()
    with torch.inference_mode():
        probs = [member(images).softmax(-1) for member in members]  # clean
    return torch.stack(probs).mean(0)


@torch.no_grad()
def greedy_decode(model, src, bos, max_len=40):
    ys = torch.full((src.size(0), 1), bos, dtype=torch.long, device=src.device)
    for _ in range(max_len):
        next_tok = model(src, ys)[:, -1].argmax(-1, keepdim=True)  # expect: TL103
        ys = torch.cat([ys, next_tok], dim=1)
    return ys


@torch.inference_mode()
def caption_images(encoder, decoder, images, bos, max_len=20):
    encoder.eval()
    feats = encoder(images)  # clean
    tokens, state = torch.full((images.size(0),), bos, dtype=torch.long, device=images.device), None
    words = []
    for _ in range(max_len):
        logits, state = decoder(feats, tokens, state)  # expect: TL103
        tokens = logits.argmax(-1)
        words.append(tokens)
    return torch.stack(words, 1)


@torch.inference_mode()
def caption_images_eval(encoder, decoder, images, bos, max_len=20):
    encoder.eval()
    decoder.eval()
    feats = encoder(images)  # clean
    tokens, state = torch.full((images.size(0),), bos, dtype=torch.long, device=images.device), None
    words = []
    for _ in range(max_len):
        logits, state = decoder(feats, tokens, state)  # clean
        tokens = logits.argmax(-1)
        words.append(tokens)
    return torch.stack(words, 1)


def test(model, data):
    with torch.no_grad():
        pred = model(data.x, data.edge_index).argmax(-1)  # expect: TL103
    return (pred[data.test_mask] == data.y[data.test_mask]).float().mean()


def distill_step(student, teacher, optimizer, x, temperature=2.0):
    teacher.eval()
    with torch.no_grad():
        soft = (teacher(x) / temperature).softmax(-1)  # clean
    optimizer.zero_grad()
    loss = F.kl_div((student(x) / temperature).log_softmax(-1), soft, reduction="batchmean")
    loss.backward()
    optimizer.step()


# %% notebook: fit, then check on held-out data
net = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 2))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
train_batches = [(torch.randn(32, 8), torch.randint(0, 2, (32,))) for _ in range(20)]
val_batches = [(torch.randn(32, 8), torch.randint(0, 2, (32,))) for _ in range(5)]
for xb, yb in train_batches:
    opt.zero_grad()
    F.cross_entropy(net(xb), yb).backward()
    opt.step()

# %% validation
correct = 0
with torch.no_grad():
    for xb, yb in val_batches:
        correct += (net(xb).argmax(-1) == yb).sum()  # expect: TL103
print(correct / 160)

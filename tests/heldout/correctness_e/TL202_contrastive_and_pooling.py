"""TL202 probe: a CLIP-style retrieval evaluator, prototype scoring and attention-MIL pooling.
Reported: a pooling head that scores the tokens of a batch (`B, N, D = tokens.shape`, then
`tokens @ self.query` is `[B, N]`) and normalises over dim 0, and a classifier whose logits are
kept batch-first by `.view(B, -1)` (`B, T, D = x.shape`) and go through `log_softmax(0)`. Near misses where dim 0 is
the right axis or not surely the batch: the text-to-image direction of an image-text similarity
matrix (`img @ txt.T` is batch-by-batch: each column over the images is a real distribution),
prototype assignment over the batch (`einsum("bd,nd->bn")`, Sinkhorn-style balancing does this
on purpose), MIL attention over the instances of one bag (`.view(n, -1)` with `n` the instance
count), a `torch.zeros(n)` prior, and a softmax over dim 0 of a tensor of unknown rank."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def retrieval_probs(img_emb, txt_emb, logit_scale):
    img = F.normalize(img_emb.flatten(1), dim=-1)
    txt = F.normalize(txt_emb.flatten(1), dim=-1)
    sims = img @ txt.T * logit_scale
    text_to_image = F.softmax(sims, dim=0)  # clean
    image_to_text = F.softmax(sims, dim=-1)  # clean
    return text_to_image, image_to_text


def prototype_assignment(feats, prototypes, eps=0.05):
    scores = torch.einsum("bd,nd->bn", feats, prototypes)
    return (scores / eps).softmax(dim=0)  # clean


class TokenPool(nn.Module):
    def __init__(self, dim=256):
        super().__init__()
        self.query = nn.Parameter(torch.randn(dim))

    def forward(self, tokens):
        B, N, D = tokens.shape
        scores = tokens @ self.query / D ** 0.5
        weights = torch.softmax(scores, dim=0)  # expect: TL202
        return (weights.unsqueeze(-1) * tokens).sum(1)


class Classifier(nn.Module):
    def __init__(self, dim=256, n_classes=10):
        super().__init__()
        self.fc = nn.Linear(dim, n_classes)

    def forward(self, x):
        B, T, D = x.shape
        logits = self.fc(x.mean(1)).view(B, -1)
        return logits.log_softmax(0)  # expect: TL202


class AttentionMIL(nn.Module):
    """Ilse et al.: one bag of N instance embeddings in, one bag embedding out."""

    def __init__(self, dim=512, hidden=128, heads=4):
        super().__init__()
        self.attn = nn.Sequential(nn.Linear(dim, hidden), nn.Tanh(), nn.Linear(hidden, heads))
        self.classifier = nn.Linear(dim * heads, 2)

    def forward(self, instances):
        n = instances.size(0)
        a = self.attn(instances).view(n, -1)
        a = torch.softmax(a, dim=0)  # clean
        bag = (a.T @ instances).flatten()
        return self.classifier(bag), a


def uniform_prior(n):
    logits = torch.zeros(n)
    return F.softmax(logits, dim=0)  # clean


def normalise_votes(votes):
    return F.softmax(votes, dim=0)  # clean

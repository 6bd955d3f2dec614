"""TL206 probe: a multi-label tagger and a detector head: `F.binary_cross_entropy_with_logits` of
`torch.sigmoid(...)` inside a focal loss, a `nn.CrossEntropyLoss(label_smoothing=...)` attribute
fed `probs` from `out.softmax(dim=1)`, and `F.cross_entropy` of `torch.softmax(...)` written
inline in a notebook-style cell; near misses are the standard focal loss (sigmoid only for the
modulating weight, the logits go to the loss), `nn.BCELoss` of a sigmoid (expects probabilities),
`F.nll_loss` of `log_softmax`, and `cross_entropy` of logits whose softmax is only logged."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def focal_loss(logits, targets, alpha=0.25, gamma=2.0):
    p = torch.sigmoid(logits)
    ce = F.binary_cross_entropy_with_logits(logits, targets, reduction="none")  # clean
    p_t = p * targets + (1 - p) * (1 - targets)
    loss = ce * ((1 - p_t) ** gamma)
    alpha_t = alpha * targets + (1 - alpha) * (1 - targets)
    return (alpha_t * loss).mean()


def broken_focal_loss(logits, targets, gamma=2.0):
    p = torch.sigmoid(logits)
    ce = F.binary_cross_entropy_with_logits(p, targets, reduction="none")  # expect: TL206
    return (ce * (1 - p) ** gamma).mean()


class Tagger(nn.Module):
    def __init__(self, encoder, n_tags, n_topics):
        super().__init__()
        self.encoder = encoder
        self.tags = nn.Linear(encoder.dim, n_tags)
        self.topic = nn.Linear(encoder.dim, n_topics)
        self.tag_loss = nn.BCELoss()
        self.topic_loss = nn.CrossEntropyLoss(label_smoothing=0.1)

    def forward(self, x):
        h = self.encoder(x)
        return self.tags(h), self.topic(h)

    def training_step(self, batch, batch_idx):
        tag_logits, topic_logits = self(batch["x"])
        tag_probs = torch.sigmoid(tag_logits)
        tag_loss = self.tag_loss(tag_probs, batch["tags"].float())  # clean
        probs = topic_logits.softmax(dim=1)
        topic_loss = self.topic_loss(probs, batch["topic"])  # expect: TL206
        self.log("topic_conf", probs.max(1).values.mean())
        return tag_loss + topic_loss


def nll_step(model, x, y):
    logp = F.log_softmax(model(x), dim=-1)
    return F.nll_loss(logp, y)  # clean


def logged_ce(model, x, y, history):
    logits = model(x)
    history.append(torch.softmax(logits.detach(), dim=-1).max(-1).values.mean().item())
    return F.cross_entropy(logits, y)  # clean


# %% quick sanity check on one batch
xb, yb = torch.randn(16, 32), torch.randint(0, 5, (16,))
head = nn.Linear(32, 5)
loss = F.cross_entropy(torch.softmax(head(xb), dim=-1), yb)  # expect: TL206
print(loss)

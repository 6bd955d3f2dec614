import torch.nn.functional as F


def attention(scores, mask):
    weights = F.softmax(
        scores.masked_fill(mask, float("-inf")),  # hide padding
    )
    probs = F.softmax(
        scores
    )
    return weights, probs

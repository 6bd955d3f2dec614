import torch.nn.functional as F


def attention(scores, mask):
    weights = F.softmax(
        scores.masked_fill(mask, float("-inf")),  # hide padding
        dim=-1,
    )
    probs = F.softmax(
        scores,
        dim=-1
    )
    return weights, probs

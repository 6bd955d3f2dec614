import torch
import torch.nn.functional as F


def attend(q, k, v):
    scores = torch.bmm(q, k.transpose(1, 2))  # [B, Q, N]
    attn = F.softmax(scores, dim=0)
    return torch.bmm(attn, v)

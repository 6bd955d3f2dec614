import torch.nn as nn
import torch.nn.functional as F


class Head(nn.Module):
    def __init__(self, dim, n_classes):
        super().__init__()
        self.proj = nn.Linear(dim, n_classes)
        self.log_probs = nn.LogSoftmax(dim=-1)

    def forward(self, x):
        return self.log_probs(self.proj(x))

    def probabilities(self, x):
        return F.softmax(self.proj(x), dim=-1)

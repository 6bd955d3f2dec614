import torch
import torch.nn as nn


class PositionalBias(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.bias = nn.Embedding(512, dim)

    def forward(self, tokens):
        positions = torch.arange(
            tokens.size(1),
            device=tokens.device,
        )
        return tokens + self.bias(positions)

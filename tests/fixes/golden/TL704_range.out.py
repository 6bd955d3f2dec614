import torch

steps = torch.arange(0, 11)
odd = torch.arange(1, 11, 2)
upto = torch.arange(0, n)

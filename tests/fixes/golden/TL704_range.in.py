import torch

steps = torch.range(0, 10)
odd = torch.range(1, 9, 2)
upto = torch.range(0, n - 1)

"""TL702 and TL703 probe: a memory-hungry pointer-generator and a legacy attack script. The attack
marks its input with `x.require_grad = True` (the typo: no gradient is ever computed for it), a
hypernetwork's generated weights get `w.require_grad = False`, the transformer encoder checkpoints
each block with `checkpoint(block, h, mask)` and a decoder stack with
`checkpoint_sequential(self.decoder, 2, h)`, both without `use_reentrant`; near misses are the
spelled-right `requires_grad`, `requires_grad_()`, and checkpointing with `use_reentrant=False`
(also through the module path)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint
from torch.utils.checkpoint import checkpoint, checkpoint_sequential


def fgsm_legacy(model, x, y, eps=8 / 255):
    x = x.clone()
    x.require_grad = True  # expect: TL702
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    return (x + eps * x.grad.sign()).clamp(0, 1)


def fgsm(model, x, y, eps=8 / 255):
    x = x.clone().detach()
    x.requires_grad = True  # clean
    loss = F.cross_entropy(model(x), y)
    grad, = torch.autograd.grad(loss, x)
    return (x + eps * grad.sign()).clamp(0, 1)


def generated_weights(hyper, z):
    w = hyper(z).view(64, 64)
    w.require_grad = False  # expect: TL702
    return w


def generated_weights_frozen(hyper, z):
    w = hyper(z).view(64, 64).detach()
    w.requires_grad_(False)  # clean
    return w


class PointerGenerator(nn.Module):
    def __init__(self, dim, n_layers, vocab):
        super().__init__()
        self.blocks = nn.ModuleList(nn.TransformerEncoderLayer(dim, 8, batch_first=True) for _ in range(n_layers))
        self.decoder = nn.Sequential(*(nn.Sequential(nn.Linear(dim, dim), nn.GELU()) for _ in range(4)))
        self.gen = nn.Linear(dim, vocab)
        self.copy = nn.Linear(dim, 1)

    def forward(self, h, mask):
        for block in self.blocks:
            h = checkpoint(block, h, None, mask)  # expect: TL703
        h = checkpoint_sequential(self.decoder, 2, h)  # expect: TL703
        return self.gen(h), torch.sigmoid(self.copy(h))

    def forward_fixed(self, h, mask):
        for block in self.blocks:
            h = checkpoint(block, h, None, mask, use_reentrant=False)  # clean
        h = torch.utils.checkpoint.checkpoint_sequential(self.decoder, 2, h, use_reentrant=False)  # clean
        return self.gen(h), torch.sigmoid(self.copy(h))

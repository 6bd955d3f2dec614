"""TL704 probe: a vocoder and attention utilities on deprecated APIs: `nn.utils.weight_norm`
through `from torch.nn.utils import weight_norm` (the import and each use),
`torch.backends.cuda.sdp_kernel(...)` as a context manager, `torch.set_default_tensor_type`, and
`torch.lu` for a log-determinant; near misses are `torch.nn.utils.parametrizations.weight_norm`,
`torch.nn.attention.sdpa_kernel`, `torch.set_default_dtype`, `torch.linalg.slogdet`,
`torch.lu_unpack` (not deprecated) and the project's own `norm` helper."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.nn.utils import weight_norm  # expect: TL704
from torch.nn.utils.parametrizations import weight_norm as wn_param

torch.set_default_tensor_type(torch.FloatTensor)  # expect: TL704
torch.set_default_dtype(torch.float32)  # clean


def norm(x):
    return x / (x.pow(2).mean(-1, keepdim=True) + 1e-6).sqrt()


class ResBlock(nn.Module):
    def __init__(self, ch, k=3, dilations=(1, 3, 5)):
        super().__init__()
        self.convs = nn.ModuleList(
            weight_norm(nn.Conv1d(ch, ch, k, dilation=d, padding=d * (k - 1) // 2)) for d in dilations  # expect: TL704
        )
        self.out = wn_param(nn.Conv1d(ch, ch, 1))  # clean

    def forward(self, x):
        for conv in self.convs:
            x = x + conv(F.leaky_relu(x, 0.1))
        return norm(self.out(x).transpose(1, 2)).transpose(1, 2)  # clean


def flash_attention(q, k, v):
    with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False):  # expect: TL704
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def flash_attention_v2(q, k, v):
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):  # clean
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def log_det(A):
    LU, pivots = torch.lu(A)  # expect: TL704
    P, L, U = torch.lu_unpack(LU, pivots)  # clean
    return U.diagonal(dim1=-2, dim2=-1).abs().log().sum(-1)


def log_det_v2(A):
    return torch.linalg.slogdet(A).logabsdet  # clean

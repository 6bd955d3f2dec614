"""TL701 and TL704 probe: a post-training quantization and ONNX export script written for torch
1.x: per-channel scales fitted with the removed `torch.lstsq`, a low-rank compression check with
the removed `torch.matrix_rank`, `torch.set_default_tensor_type`, weight norms through
`torch.norm(w, dim=1)`, a whitening step with `torch.cholesky`, a straight-through rounding
Function decorated with `torch.cuda.amp.custom_fwd` (imported by name: the import and its use),
`F.upsample` in the decoder and the export check through `torch.testing.assert_allclose`; near
misses are the ported calls (`torch.linalg.lstsq`, `torch.linalg.matrix_rank`,
`torch.linalg.vector_norm`, `torch.linalg.cholesky`, `torch.amp.custom_fwd(device_type="cuda")`,
`F.interpolate`, `torch.testing.assert_close`) and `np.linalg.norm` on a NumPy array."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.cuda.amp import custom_fwd  # expect: TL704

torch.set_default_tensor_type(torch.FloatTensor)  # expect: TL704


def fit_scales_legacy(acts, targets):
    return torch.lstsq(targets, acts).solution[: acts.size(1)]  # expect: TL701


def fit_scales(acts, targets):
    return torch.linalg.lstsq(acts, targets).solution  # clean


def compressible_legacy(weight, tol=1e-3):
    return torch.matrix_rank(weight, tol) < min(weight.shape) // 2  # expect: TL701


def compressible(weight, tol=1e-3):
    return torch.linalg.matrix_rank(weight, atol=tol) < min(weight.shape) // 2  # clean


def channel_ranges_legacy(weight):
    return torch.norm(weight, dim=1)  # expect: TL704


def channel_ranges(weight):
    return torch.linalg.vector_norm(weight, dim=1)  # clean


def numpy_ranges(weight: np.ndarray):
    return np.linalg.norm(weight, axis=1)  # clean


def whitening_legacy(cov):
    return torch.cholesky(cov)  # expect: TL704


def whitening(cov):
    return torch.linalg.cholesky(cov)  # clean


class RoundSTELegacy(torch.autograd.Function):
    @staticmethod
    @custom_fwd(cast_inputs=torch.float32)  # expect: TL704
    def forward(ctx, x, scale):
        return torch.round(x / scale) * scale

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class RoundSTE(torch.autograd.Function):
    @staticmethod
    @torch.amp.custom_fwd(device_type="cuda", cast_inputs=torch.float32)  # clean
    def forward(ctx, x, scale):
        return torch.round(x / scale) * scale

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class Decoder(nn.Module):
    def __init__(self, ch, n_classes):
        super().__init__()
        self.conv = nn.Conv2d(ch, n_classes, 1)

    def forward(self, x, legacy=False):
        if legacy:
            return F.upsample(self.conv(x), scale_factor=4, mode="bilinear")  # expect: TL704
        return F.interpolate(self.conv(x), scale_factor=4, mode="bilinear", align_corners=False)  # clean


def check_export_legacy(torch_out, ort_out):
    torch.testing.assert_allclose(torch.from_numpy(ort_out), torch_out, rtol=1e-3, atol=1e-5)  # expect: TL704


def check_export(torch_out, ort_out):
    torch.testing.assert_close(torch.from_numpy(ort_out), torch_out, rtol=1e-3, atol=1e-5)  # clean

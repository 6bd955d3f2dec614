"""`torch.nn` layers: constructor signatures, forward shape rules, parameter counts, one module
per family.  Each kind is registered under its literal class name (`register(LayerKind("Linear",
...))`, `_conv_kind("Conv2d", ...)`), so `grep -rn '"Conv2d"' server/shapes` finds it.

    kinds         `LayerKind`, the `KINDS` table, `Site`, reading constructor parameters
    linear        Linear, LazyLinear, Bilinear, Embedding, EmbeddingBag
    activations   activations, dropout, Identity, Softmax, GLU
    conv_pool     Conv*, ConvTranspose*, *Pool*, and the conv/pool size arithmetic
    norm          BatchNorm, InstanceNorm, LayerNorm, RMSNorm, GroupNorm
    reshaping     Flatten, Unflatten, Upsample, PixelShuffle, padding layers
    recurrent     RNN, GRU, LSTM and their cells
    attention     MultiheadAttention, Transformer{Encoder,Decoder}Layer
    containers    Sequential, TransformerEncoder, TransformerDecoder
    losses        the loss modules
    construction  building a `Layer` from its constructor call, `self.fc.weight`
"""
from torch_lsp.shapes.layers import (  # noqa: F401  (importing a family registers its kinds)
    activations, attention, conv_pool, linear, norm, recurrent,
)
from torch_lsp.shapes.layers.construction import build_layer, layer_attribute
from torch_lsp.shapes.layers.containers import sequential
from torch_lsp.shapes.layers.kinds import KINDS, LayerKind, Site, param_of
from torch_lsp.shapes.layers.losses import loss_result
from torch_lsp.shapes.layers.reshaping import interpolate, pad

__all__ = ["KINDS", "LayerKind", "Site", "build_layer", "interpolate", "layer_attribute", "loss_result", "pad",
           "param_of", "sequential"]

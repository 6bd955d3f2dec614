"""Calls that wrap their argument and behave like it: `nn.Parameter(t)`, `torch.compile(model)`,
`DistributedDataParallel(model)`."""
from __future__ import annotations

from torch_lsp.shapes.functions.registry import Call, function
from torch_lsp.shapes.values import UNKNOWN, Int, Str, Tensor, Value


@function("Parameter", "Buffer", within=("torch.nn",))
@function("Parameter", within=("torch.nn.parameter",))
def _parameter(call: Call) -> Value:
    data = call.arg(0, "data")
    return data if isinstance(data, Tensor) else UNKNOWN


@function("compile", within=("torch",))
@function("script", within=("torch.jit",))
@function("DataParallel", within=("torch.nn",))
@function("DataParallel", "DistributedDataParallel", within=("torch.nn.parallel",))
def _wrapped_module(call: Call) -> Value:
    """`torch.compile(model)`, `DistributedDataParallel(model)`: called like the module itself."""
    module = call.arg(0, "model") or call.arg(0, "obj") or call.arg(0, "module")
    return module if module is not None and not isinstance(module, (Str, Int)) else UNKNOWN

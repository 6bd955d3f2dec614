"""New tensors: `torch.zeros`/`ones`/`rand`/`full`/`arange`/`eye`/`tensor`, the `*_like` functions,
`x.new_zeros(...)`, random draws (`randint`, `randperm`, `multinomial`)."""
from __future__ import annotations

import ast

from torch_lsp.shapes.dims import Dim
from torch_lsp.shapes.functions.arguments import dim_of, dtype_given, dtype_of, items_of, sizes_from
from torch_lsp.shapes.functions.registry import TORCH, Call, function, method
from torch_lsp.shapes.ops import ONE, WILDCARD
from torch_lsp.shapes.values import UNKNOWN, Bool, Int, Num, SizeOf, Tensor, Value


def _new_factory(fill_position: int | None):
    def rule(call: Call, x: Tensor) -> Value:
        size = call.arg(0, "size")
        sizes = sizes_from([size]) if size is not None and fill_position is not None else _sizes_args_until(call)
        if sizes is None or WILDCARD in sizes:
            return UNKNOWN
        dtype = dtype_given(call, x.dtype)
        return Tensor(tuple(sizes), False, dtype, call.origin())
    return rule


def _sizes_args_until(call: Call) -> list | None:
    if not call.args:
        return None
    return sizes_from(call.args)


method("new_zeros", "new_ones", "new_empty")(_new_factory(None))
method("new_full")(_new_factory(1))


@method("new_tensor")
def _new_tensor(call: Call, x: Tensor) -> Value:
    return literal_tensor(call, call.arg(0, "data"))


def _factory(dtype: str | None, fill: bool = False):
    def rule(call: Call) -> Value:
        args = call.args[:-1] if fill and call.args else call.args
        if fill and "size" not in call.kwargs and len(call.args) < 2:
            return UNKNOWN
        sizes = sizes_from([call.kwargs["size"]]) if "size" in call.kwargs else (sizes_from(args) if args else None)
        if not fill and not call.args and "size" not in call.kwargs:
            return UNKNOWN
        if fill and "size" not in call.kwargs:
            sizes = sizes_from([call.args[0]])
        if sizes is None or WILDCARD in sizes:
            return UNKNOWN
        kind = dtype_given(call, dtype if not fill else _fill_literal_dtype(call))
        return Tensor(tuple(sizes), False, kind, call.origin())
    return rule


def _fill_literal_dtype(call: Call) -> str | None:
    """The dtype `torch.full` infers from a fill value written as a float or bool literal (`0.0`,
    `-1e9`, `True`); None for anything else: a number of unknown kind (a config field) proves nothing."""
    node = getattr(call.site, "node", None)
    if not isinstance(node, ast.Call):
        return None
    fill = next((k.value for k in node.keywords if k.arg == "fill_value"), None)
    if fill is None and len(node.args) >= 2 and not any(isinstance(a, ast.Starred) for a in node.args[:2]):
        fill = node.args[1]
    if isinstance(fill, ast.UnaryOp) and isinstance(fill.op, (ast.USub, ast.UAdd)):
        fill = fill.operand
    if not isinstance(fill, ast.Constant):
        return None
    if isinstance(fill.value, bool):
        return "bool"
    return "float" if isinstance(fill.value, float) else None


function("zeros", "ones", "empty", "rand", "randn", within=(TORCH,))(_factory("float"))
function("full", within=(TORCH,))(_factory(None, fill=True))


@function("zeros_like", "ones_like", "empty_like", "rand_like", "randn_like", "full_like", "randint_like",
          within=(TORCH,))
def _like(call: Call) -> Value:
    source = call.arg(0, "input")
    if not isinstance(source, Tensor):
        return UNKNOWN
    return source.with_dims(source.dims, dtype=dtype_given(call, source.dtype),
                            origin=source.origin)


@function("randint", within=(TORCH,))
def _randint(call: Call) -> Value:
    size = call.kwargs.get("size")
    if size is None:
        size = call.args[-1] if len(call.args) in (2, 3) else None
    sizes = sizes_from([size]) if size is not None else None
    if sizes is None or WILDCARD in sizes:
        return UNKNOWN
    return Tensor(tuple(sizes), False, dtype_given(call, "long"), call.origin())


@function("randperm", within=(TORCH,))
def _randperm(call: Call) -> Value:
    return Tensor((dim_of(call.arg(0, "n")),), False, dtype_given(call, "long"), call.origin())


@function("arange", within=(TORCH,))
def _arange(call: Call) -> Value:
    values = list(call.args)
    for name in ("start", "end", "step"):
        if name in call.kwargs:
            return UNKNOWN if name != "end" or values else Tensor((dim_of(call.kwargs["end"]),), False, "long",
                                                                   call.origin())
    if not values or len(values) > 3 or any(not isinstance(v, Int) for v in values):
        # A number of unknown kind (`n = mask.sum().item()`, often an int) leaves the dtype
        # unknown: only `dtype=` says, or the result would be taken for float indices (TL503).
        dtype = dtype_given(call, None)
        return Tensor((None,), False, dtype, call.origin()) if values else UNKNOWN
    dims = [v.dim for v in values]  # type: ignore[union-attr]
    kind = dtype_given(call, "long")
    if len(dims) == 1:
        return Tensor((dims[0],), False, kind, call.origin())
    start, end = dims[0], dims[1]
    step = dims[2] if len(dims) == 3 else ONE
    if start is None or end is None or step is None or step.as_int() in (None, 0):
        return Tensor((None,), False, kind, call.origin())
    if step.as_int() > 0:
        count = (end - start + step - ONE).floordiv(step)  # ceil((end - start) / step)
    else:
        magnitude = Dim.const(-step.as_int())
        count = (start - end + magnitude - ONE).floordiv(magnitude)  # counting down
    if count is not None and count.is_int:
        count = Dim.const(max(count.as_int(), 0))
    return Tensor((count,), False, kind, call.origin())


@function("linspace", "logspace", within=(TORCH,))
def _linspace(call: Call) -> Value:
    return Tensor((dim_of(call.arg(2, "steps")),), False, dtype_given(call, "float"), call.origin())


@function("eye", within=(TORCH,))
def _eye(call: Call) -> Value:
    n, m = dim_of(call.arg(0, "n")), call.arg(1, "m")
    return Tensor((n, dim_of(m) if m is not None else n), False, dtype_given(call, "float"),
                  call.origin())


@function("tensor", "as_tensor", within=(TORCH,))
def _tensor(call: Call) -> Value:
    result = literal_tensor(call, call.arg(0, "data"))
    if isinstance(result, Tensor):
        return result.with_dims(result.dims, dtype=dtype_given(call, result.dtype))
    return result


def literal_tensor(call: Call, data: Value | None) -> Value:
    shape = _literal_shape(data, 0)
    if shape is None:
        return UNKNOWN
    dims, kind = shape
    return Tensor(tuple(Dim.const(d) for d in dims), False, kind, call.origin())


def _literal_shape(value: Value | None, depth: int) -> tuple[list[int], str | None] | None:
    if depth > 8 or value is None:
        return None
    if isinstance(value, Int):
        return [], "long"
    if isinstance(value, Num):
        return [], "float"
    if isinstance(value, Bool):
        return [], "bool"
    items = items_of(value) if not isinstance(value, SizeOf) else None
    if items is None:
        return None
    if not items:
        return [0], "float"
    shapes = [_literal_shape(item, depth + 1) for item in items]
    if any(s is None for s in shapes) or len({tuple(s[0]) for s in shapes}) != 1:  # type: ignore[index]
        return None
    kinds = {s[1] for s in shapes}  # type: ignore[index]
    kind = "float" if "float" in kinds else kinds.pop() if len(kinds) == 1 else None
    return [len(items)] + shapes[0][0], kind  # type: ignore[index]


@function("multinomial", within=(TORCH,))
def _multinomial(call: Call) -> Value:
    probabilities, samples = call.arg(0, "input"), dim_of(call.arg(1, "num_samples"))
    if not isinstance(probabilities, Tensor) or not probabilities.dims:
        return UNKNOWN
    return Tensor(probabilities.dims[:-1] + (samples,), probabilities.variadic, "long", call.origin())


@function("Tensor", "FloatTensor", within=(TORCH,))
def _legacy_constructor(call: Call) -> Value:
    """`torch.Tensor(n_in, n_out)`: sizes given as ints make an uninitialised float tensor (a
    layer's weight before `nn.init`).  A list, tuple or tensor argument is data
    (`torch.Tensor([1, 2])`) and stays unknown, as does any argument not known to be an int."""
    if not call.args or call.kwargs or not all(isinstance(a, Int) and a.dim is not None for a in call.args):
        return UNKNOWN
    return Tensor(tuple(a.dim for a in call.args), False, "float", call.origin())

"""What a `torch.nn` layer kind is (`LayerKind`), the `KINDS` table, and the helpers every
kind's rules use: reading constructor parameters, the input tensor, reporting a mismatch.

A layer is built from its constructor call into a `Layer` value that keeps the
arguments deciding its shapes (`Linear(n_embd, 3*n_embd)`).  Calling it applies the
kind's `forward` rule through a `Site` (the interpreter's view of the call), which
also receives definite mismatches (`site.fail`) and backward requirements on
inputs nothing was known about (`site.require`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, Sequence

from torch_lsp.shapes.dims import Dim, product
from torch_lsp.shapes.ops import describe, surely_differ
from torch_lsp.shapes.values import (
    NONE, UNKNOWN, UNKNOWN_TENSOR, Bool, Int, Layer, ListValue, Num, Opaque, Origin, Str, Tensor, TupleValue, Value,
    render_dim,
)


class Site(Protocol):
    """What a layer or op rule may ask of the interpreter at one call."""

    callee: str  # source text of what is called: "self.fc"

    def origin(self, text: str) -> Origin: ...

    def here(self) -> Origin: ...

    def layer_origin(self, layer: "Layer") -> Origin: ...

    def fail(self, message: str, kind: str = "shape") -> None: ...  # kind "dtype": a dtype the op rejects

    def require(self, value: Value, needed: Tensor) -> Tensor: ...

    def call(self, callee: Value, args: list[Value]) -> Value: ...


Forward = Callable[[Site, "Layer", list, dict], Value]
ParamCount = Callable[["Layer"], "Dim | None"]


@dataclass(eq=False)
class LayerKind:
    name: str
    signature: tuple[tuple[str, Any], ...]  # (parameter, default); REQUIRED when none
    forward: Forward
    describe: Callable[["Layer"], str]
    param_count: ParamCount = lambda layer: Dim()
    weights: Callable[["Layer"], dict[str, Tensor]] = lambda layer: {}
    field_names: dict[str, str] = field(default_factory=dict)  # attribute -> parameter (`in_features`)

    def __post_init__(self) -> None:
        self.parameter_names = tuple(n for n, _ in self.signature)

    def __repr__(self) -> str:
        return f"LayerKind({self.name})"


REQUIRED = object()
KINDS: dict[str, LayerKind] = {}


def param_of(value: Value) -> Any:
    """The constructor argument as a plain parameter: Dim, bool, str, float, None, a tuple, or UNKNOWN."""
    if isinstance(value, Int):
        return value.dim if value.dim is not None else UNKNOWN
    if isinstance(value, Opaque):
        return value.dim if value.dim is not None else UNKNOWN
    if isinstance(value, Bool):
        return value.value if value.value is not None else UNKNOWN
    if isinstance(value, Str):
        return value.value
    if value is NONE:
        return None
    if isinstance(value, TupleValue):
        return tuple(param_of(item) for item in value.items)
    if isinstance(value, ListValue) and value.exact:
        return tuple(param_of(item) for item in value.items)
    if isinstance(value, Num):
        return 0.5  # a float argument (dropout, eps): its value never decides a shape
    return UNKNOWN


def bind_params(kind: LayerKind, args: Sequence[Value], kwargs: dict[str, Value]) -> tuple | None:
    """(parameter, value) pairs for every parameter of the signature, or None if required ones are missing."""
    bound: dict[str, Any] = {}
    names = kind.parameter_names
    for name, value in zip(names, args):
        bound[name] = param_of(value)
    for name, value in kwargs.items():
        if name in names:
            bound[name] = param_of(value)
    params = []
    for name, default in kind.signature:
        if name in bound:
            params.append((name, bound[name]))
        elif default is REQUIRED:
            params.append((name, UNKNOWN))
        else:
            params.append((name, default))
    return tuple(params)


def dim_param(layer: Layer, name: str) -> Dim | None:
    value = layer.get(name)
    return value if isinstance(value, Dim) else None


def tuple_param(layer: Layer, name: str, count: int) -> tuple[Dim | None, ...] | None:
    value = layer.get(name)
    if isinstance(value, Dim):
        return (value,) * count
    if isinstance(value, tuple) and len(value) == count:
        return tuple(v if isinstance(v, Dim) else None for v in value)
    return None


def flag(layer: Layer, name: str) -> bool | None:
    value = layer.get(name)
    return value if isinstance(value, bool) else None


def text(value: Any) -> str:
    if isinstance(value, Dim):
        return value.render()
    if isinstance(value, tuple):
        parts = [text(v) for v in value]
        return parts[0] if len(set(parts)) == 1 else "(" + ", ".join(parts) + ")"
    if value is UNKNOWN:
        return "?"
    return repr(value)


def input_tensor(site: Site, args: list) -> Tensor | None:
    if not args:
        return None
    value = args[0]
    if isinstance(value, Tensor):
        return value
    if isinstance(value, Opaque) or value is UNKNOWN:
        return UNKNOWN_TENSOR
    return None


def register(kind: LayerKind) -> LayerKind:
    """Add a layer kind to `KINDS` under its literal name; a name registered twice is an error."""
    if kind.name in KINDS:
        raise ValueError(f"the layer kind `{kind.name}` is registered twice")
    KINDS[kind.name] = kind
    return kind


def mismatch(site: Site, layer: Layer, expectation: str, got: Tensor) -> None:
    site.fail(f"`{site.callee}` is {layer.kind.describe(layer)}, which expects {expectation}, "
              f"but it is given {describe(got)}")


def wrong_last_dim(site: Site, layer: Layer, x: Tensor, size, owner: str = "the") -> bool:
    """Report (and say so) when `x`'s last dim surely is not the `size` features the layer takes."""
    if x.dims and surely_differ(x.dims[-1], size):
        mismatch(site, layer, f"{render_dim(size)} features in {owner} last dim", x)
        return True
    return False


def bias_count(layer: Layer, size: Dim | None) -> Dim | None:
    bias = layer.get("bias", True)
    if bias is False:
        return Dim()
    return size if bias is True else None


def known_product(*dims: Dim | None) -> Dim | None:
    if any(d is None for d in dims):
        return None
    return product(dims)  # type: ignore[arg-type]

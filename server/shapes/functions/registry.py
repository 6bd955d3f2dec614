"""The two tables a call is looked up in, and how a rule gets into them.

`METHODS[name](call, tensor)` answers `tensor.name(*args)`; `FUNCTIONS[qualname](call)`
answers `torch.name(...)`, `torch.nn.functional.name(...)`, ...  Every rule is registered
by its literal short name, so `grep -rn '"conv2d"' server/shapes` lands on it:

    @method("sum", "mean", also_torch=True)        # x.sum(...), and torch.sum(x, ...)
    @function("conv2d", within=(TORCH, FUNCTIONAL))  # torch.conv2d, F.conv2d

A name registered twice is an error at import, so each name has one rule.
"""
from __future__ import annotations

from typing import Callable

from torch_lsp.shapes.layers import Site
from torch_lsp.shapes.values import UNKNOWN, Tensor, Value

TORCH = "torch"
FUNCTIONAL = "torch.nn.functional"
SPECIAL = "torch.special"


class Call:
    """One call of a torch function or tensor method: its arguments and the site."""

    __slots__ = ("site", "args", "kwargs")

    def __init__(self, site: Site, args: list[Value], kwargs: dict[str, Value]):
        self.site, self.args, self.kwargs = site, args, kwargs

    def arg(self, position: int, name: str, default: Value | None = None) -> Value | None:
        if name in self.kwargs:
            return self.kwargs[name]
        alias = _NUMPY_ALIASES.get(name)
        if alias is not None and alias in self.kwargs:  # `torch.argmax(x, axis=1)`, `x.sum(keepdims=True)`
            return self.kwargs[alias]
        if position < len(self.args):
            return self.args[position]
        return default

    def origin(self):
        return self.site.here()

    def fail(self, message: str, kind: str = "shape") -> None:
        self.site.fail(message, kind)


# Keywords torch also accepts under NumPy's names.
_NUMPY_ALIASES = {"dim": "axis", "keepdim": "keepdims"}

MethodRule = Callable[[Call, Tensor], Value]
FunctionRule = Callable[[Call], Value]
METHODS: dict[str, MethodRule] = {}
FUNCTIONS: dict[str, FunctionRule] = {}


def method(*names: str, also_torch: bool = False):
    """Register a rule for `tensor.name(...)`; `also_torch`: `torch.name(x, ...)` is the same call."""
    def decorate(rule: MethodRule) -> MethodRule:
        for name in names:
            _register(METHODS, name, rule)
            if also_torch:
                _register(FUNCTIONS, f"{TORCH}.{name}", tensor_first(rule))
        return rule
    return decorate


def function(*names: str, within: tuple[str, ...]):
    """Register a rule for `module.name(...)` in each module of `within`."""
    def decorate(rule: FunctionRule) -> FunctionRule:
        for module in within:
            for name in names:
                _register(FUNCTIONS, f"{module}.{name}", rule)
        return rule
    return decorate


def _register(table: dict, key: str, rule) -> None:
    if key in table:
        raise ValueError(f"the shape rule of `{key}` is registered twice")
    table[key] = rule


def tensor_first(rule: MethodRule) -> FunctionRule:
    """`torch.name(x, *rest)` is `x.name(*rest)`."""
    def function_rule(call: Call) -> Value:
        tensor = call.arg(0, "input")
        if not isinstance(tensor, Tensor):
            return UNKNOWN
        rest = call.args[1:] if call.args else []
        kwargs = {k: v for k, v in call.kwargs.items() if k != "input"}
        return rule(Call(call.site, list(rest), kwargs), tensor)
    return function_rule

"""`math.sqrt(d)`, `math.ceil(x / 2)`, ...: Python's math functions on sizes."""
from __future__ import annotations

from torch_lsp.shapes.dims import Dim
from torch_lsp.shapes.functions.arguments import int_of
from torch_lsp.shapes.values import NUM, Int, Value


def math_result(name: str, args: list[Value]) -> Value:
    """`math.sqrt(d)`, `math.ceil(x / 2)`, ...: an int where that is exact, else a float."""
    if name in ("ceil", "floor", "trunc", "isqrt", "gcd", "prod", "comb", "factorial"):
        if name == "gcd" and all(int_of(a) is not None for a in args):
            import math as _math
            return Int(Dim.const(_math.gcd(*(int_of(a) for a in args))))  # type: ignore[arg-type]
        if len(args) == 1 and isinstance(args[0], Int):
            return args[0]
        return Int(None)
    return NUM

"""Python values the interpreter meets besides tensors and modules: `range(...)`,
slices, `super()`, `...`, and unknown objects a tensor-only method is called on."""
from __future__ import annotations

from torch_lsp.shapes import functions as fn
from torch_lsp.shapes.dims import Dim
from torch_lsp.shapes.limits import MAX_UNROLL
from torch_lsp.shapes.ops import ONE
from torch_lsp.shapes.values import NONE, ClassRef, Int, Value


# ------------------------------------------------------------ small values
class RangeValue(Value):
    __slots__ = ("start", "stop", "step")

    def __init__(self, start: Dim | None, stop: Dim | None, step: Dim | None):
        self.start, self.stop, self.step = start, stop, step

    @staticmethod
    def of(args: list[Value]) -> "RangeValue":
        dims = [fn.dim_of(a) for a in args]
        if len(dims) == 1:
            return RangeValue(Dim(), dims[0], ONE)
        if len(dims) == 2:
            return RangeValue(dims[0], dims[1], ONE)
        if len(dims) == 3:
            return RangeValue(dims[0], dims[1], dims[2])
        return RangeValue(None, None, None)

    def items(self) -> list[Value] | None:
        values = [d.as_int() if d is not None else None for d in (self.start, self.stop, self.step)]
        if None in values or values[2] == 0:
            return None
        numbers = range(*values)  # type: ignore[arg-type]
        if len(numbers) > MAX_UNROLL:
            return None
        return [Int(Dim.const(n)) for n in numbers]

    def length(self) -> Dim | None:
        if self.start is None or self.stop is None or self.step is None:
            return None
        if self.step == ONE and self.start == Dim():
            return self.stop
        items = self.items()
        return Dim.const(len(items)) if items is not None else None

    @property
    def key(self):
        return ("range", self.start, self.stop, self.step)


class SliceValue(Value):
    __slots__ = ("bounds",)

    def __init__(self, *bounds: Value):
        self.bounds = bounds

    def concrete(self) -> tuple | None:
        result = []
        for bound in self.bounds:
            if bound is NONE:
                result.append(None)
            else:
                number = fn.int_of(bound)
                if number is None:
                    return None
                result.append(number)
        return tuple(result)


class SuperValue(Value):
    __slots__ = ("instance", "base")

    def __init__(self, instance: Value | None, base: ClassRef | None):
        self.instance, self.base = instance, base


class EllipsisValue(Value):
    __slots__ = ()


class UnknownTensorOf(Value):
    """Something unknown on which a tensor-only method is called; `source` is refined by facts."""

    __slots__ = ("source",)

    def __init__(self, source: Value):
        self.source = source


ELLIPSIS_VALUE = EllipsisValue()

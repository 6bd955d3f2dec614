"""Matrix products: `matmul`/`@`, `mm`, `bmm`, `mv`, `dot`, `outer`, `einsum`, `baddbmm`, `cdist`."""
from __future__ import annotations

from torch_lsp.shapes import ops
from torch_lsp.shapes.functions.arguments import items_of
from torch_lsp.shapes.functions.registry import TORCH, Call, function, method
from torch_lsp.shapes.layers.requirements import mixed_product
from torch_lsp.shapes.ops import ShapeError, describe
from torch_lsp.shapes.values import UNKNOWN, UNKNOWN_TENSOR, Opaque, Str, Tensor, Value, scalar_tensor


def _matmul_rule(kind: str):
    def rule(call: Call, x: Tensor) -> Value:
        other = call.arg(0, "other") if kind != "bmm" else call.arg(0, "mat2")
        if kind == "mm":
            other = call.arg(0, "mat2")
        if kind == "bmm":
            other = surely_tensor(other)
        if not isinstance(other, Tensor):
            return UNKNOWN
        return matmul_of(call, x, other, kind)
    return rule


def surely_tensor(value: Value | None) -> Value | None:
    """An operand only a tensor can be (`torch.bmm`'s, `torch.einsum`'s): unknown is a tensor
    of unknown shape (so is a parameter that might otherwise be a number), and the result
    still has the rank the operation gives it."""
    return UNKNOWN_TENSOR if value is UNKNOWN or isinstance(value, Opaque) else value


def matmul_of(call: Call, a: Tensor, b: Tensor, kind: str) -> Value:
    rule = {"matmul": ops.matmul, "mm": ops.mm, "bmm": ops.bmm}[kind]
    mixed = mixed_product(f"`{call.site.callee}`", a, b)
    if mixed is not None:
        call.fail(mixed, "dtype")
    try:
        return rule(a, b, call.origin())
    except ShapeError as error:
        if str(error) == "batch" and kind == "matmul":
            call.fail(f"`{call.site.callee}` multiplies {describe(a)} by {describe(b)}: their batch dims cannot "
                      f"broadcast")
        elif str(error) == "batch":
            call.fail(f"`{call.site.callee}` multiplies batches of different sizes: {describe(a)} and {describe(b)}")
        elif str(error) == "rank":
            call.fail(f"`{call.site.callee}` takes two 3-D batches of matrices, but it is given {describe(a)} "
                      f"and {describe(b)}")
        else:
            inner_a = a.dims[-1]
            inner_b = b.dims[-2] if len(b.dims) >= 2 else b.dims[-1]
            call.fail(f"`{call.site.callee}` multiplies {describe(a)} by {describe(b)}: the inner sizes "
                      f"{inner_a.render()} and {inner_b.render()} differ")
        return UNKNOWN


method("matmul", also_torch=True)(_matmul_rule("matmul"))
method("mm", also_torch=True)(_matmul_rule("mm"))
method("bmm")(_matmul_rule("bmm"))


@function("bmm", within=(TORCH,))
def _bmm(call: Call) -> Value:
    """`torch.bmm(a, b)`: [batch, n, p] whatever is known of `a` and `b`."""
    a, b = surely_tensor(call.arg(0, "input")), surely_tensor(call.arg(1, "mat2"))
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        return UNKNOWN
    return matmul_of(call, a, b, "bmm")


@method("mv", also_torch=True)
def _mv(call: Call, x: Tensor) -> Value:
    other = call.arg(0, "vec")
    return matmul_of(call, x, other, "matmul") if isinstance(other, Tensor) and x.rank == 2 else UNKNOWN


@method("dot", "inner", also_torch=True)
@method("vdot")
def _dot(call: Call, x: Tensor) -> Value:
    return scalar_tensor(call.origin(), x.dtype) if x.rank == 1 else UNKNOWN


@method("outer", "ger", also_torch=True)
def _outer(call: Call, x: Tensor) -> Value:
    other = call.arg(0, "vec2")
    if isinstance(other, Tensor) and x.rank == 1 and other.rank == 1:
        return Tensor((x.dims[0], other.dims[0]), False, x.dtype, call.origin())
    return UNKNOWN



@function("einsum", within=(TORCH,))
def _einsum(call: Call) -> Value:
    spec = call.args[0] if call.args else None
    operands = call.args[1:]
    if len(operands) == 1 and items_of(operands[0]) is not None:
        operands = items_of(operands[0])  # type: ignore[assignment]
    operands = [surely_tensor(o) for o in operands]
    if not isinstance(spec, Str) or not operands or not all(isinstance(o, Tensor) for o in operands):
        return UNKNOWN
    try:
        return ops.einsum(spec.value, operands, call.origin())  # type: ignore[arg-type]
    except ShapeError as error:
        call.fail(f"`{call.site.callee}(\"{spec.value}\", ...)`: {error}")
        return UNKNOWN


@function("baddbmm", "addbmm", within=(TORCH,))
def _baddbmm(call: Call) -> Value:
    a, b = surely_tensor(call.arg(1, "batch1")), surely_tensor(call.arg(2, "batch2"))
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        return UNKNOWN
    return matmul_of(call, a, b, "bmm")


@function("cdist", within=(TORCH,))
def _cdist(call: Call) -> Value:
    a, b = call.arg(0, "x1"), call.arg(1, "x2")
    if not isinstance(a, Tensor) or not isinstance(b, Tensor) or len(a.dims) < 2 or len(b.dims) < 2:
        return UNKNOWN
    return Tensor(a.dims[:-1] + (b.dims[-2],), a.variadic, a.dtype, call.origin())


@function("diag", within=(TORCH,))
def _diag(call: Call) -> Value:
    x = call.arg(0, "input")
    if isinstance(x, Tensor) and x.rank == 1 and call.arg(1, "diagonal") is None:
        return Tensor((x.dims[0], x.dims[0]), False, x.dtype, call.origin())
    return UNKNOWN

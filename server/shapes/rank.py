"""Ranks, leading dims and symbolic sizes of tensors, where the code states them plainly.

TL202 needs to know that a tensor has rank >= 2 and that its dim 0 is the batch;
TL203 needs the symbolic sizes of a tensor to tell a `view` that only splits dims
from one that merges dims a transpose moved apart.  Both come from the few places
where code states a shape outright:

- what built the value: `torch.bmm`/`baddbmm` (dim 0 is the batch), `torch.einsum`
  with an explicit output, `x.view(B, -1)` / `reshape`, factories (`torch.zeros(B, N)`);
- unpacking: `B, N, C = x.shape` (or `x.size()`);
- shape comments: `scores = ...  # [B, Q, N]`, `# tokens: [B, N, D]`.

Values flow through local names only along assignments that surely ran before the use
(`reaching_assignment`).  Everything else is unknown (`None`), and callers stay silent.
This is deliberately not a shape interpreter: it never guesses.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from torch_lsp.fact_cache import FactKey
from torch_lsp.shapes.batch import BATCH_NAME
from torch_lsp.shapes.stated import trailing_comment
from torch_lsp.roles import dominates, reaching_assignment, rebound_in_expression
from torch_lsp.syntax_nodes import argument, dotted, int_constant, node_text

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.roles import Assignment

MAX_DEPTH = 40

FACTORIES = {"torch.zeros", "torch.ones", "torch.empty", "torch.rand", "torch.randn"}
BATCHED_MATMULS = {"torch.bmm", "torch.baddbmm"}
# Methods whose result has the shape of their receiver (when their other operands are scalars or masks).
SAME_SHAPE_METHODS = {
    "float", "double", "half", "bfloat16", "to", "type_as", "contiguous", "clone", "detach", "cpu", "cuda",
    "masked_fill", "exp", "log", "abs", "neg", "sigmoid", "tanh", "relu", "clamp", "clamp_min", "clamp_max",
    "nan_to_num", "requires_grad_", "div", "mul", "add", "sub", "softmax", "log_softmax",
}
SAME_SHAPE_FUNCTIONS = {
    "torch.softmax", "torch.log_softmax", "torch.sigmoid", "torch.tanh", "torch.exp", "torch.relu",
    "torch.nn.functional.softmax", "torch.nn.functional.log_softmax", "torch.nn.functional.relu",
    "torch.nn.functional.gelu", "torch.nn.functional.silu", "torch.nn.functional.dropout",
}
TRANSPOSING_METHODS = {"transpose", "swapaxes", "swapdims", "permute", "t", "movedim", "moveaxis"}
TRANSPOSING_FUNCTIONS = {
    "torch.transpose", "torch.swapaxes", "torch.swapdims", "torch.permute", "torch.t", "torch.movedim",
    "torch.moveaxis",
}
TRANSPOSING_ATTRIBUTES = {"T", "mT", "H", "mH"}

_COMMENT_DIM = r"(?:[A-Za-z_][\w.]*|\d+)(?:\s*(?:\*|//)\s*(?:[A-Za-z_][\w.]*|\d+))*"
_COMMENT_SHAPE = re.compile(
    rf"[\[(]\s*({_COMMENT_DIM}(?:\s*(?:,|\bx\b|×)\s*{_COMMENT_DIM})+)\s*,?\s*[\])]"
)


# ------------------------------------------------------------------ dims
@dataclass(frozen=True)
class Dim:
    """A size as a product of symbols (`B`, `heads`, `C//heads`, `12`); `()` is size 1."""

    factors: tuple[str, ...]

    def times(self, other: "Dim") -> "Dim":
        factors = list(self.factors) + list(other.factors)
        return Dim(tuple(sorted(_cancel_floordiv(factors))))

    @property
    def is_one(self) -> bool:
        return not self.factors

    def __str__(self) -> str:
        return "*".join(self.factors) or "1"


WILDCARD = "-1"  # a `-1` in a view: whatever is left


def _cancel_floordiv(factors: list[str]) -> list[str]:
    """`heads * (C // heads)` is `C` (code that writes it assumes divisibility)."""
    changed = True
    while changed:
        changed = False
        for factor in factors:
            if "//" in factor:
                numerator, denominator = factor.split("//", 1)
                if denominator in factors:
                    factors.remove(factor)
                    factors.remove(denominator)
                    factors.append(numerator)
                    changed = True
                    break
    return factors


def size_symbol(tensor: ast.AST, index: int) -> str | None:
    """One spelling for `x.size(1)`, `x.shape[1]` and `x.size()[1]`."""
    name = dotted(tensor)
    return f"{name}.size({index})" if name else None


def dim_of(expr: ast.AST, resolve: Callable[[ast.AST, int], Dim | None] | None = None) -> Dim | str | None:
    """The symbolic size an expression spells, `WILDCARD` for -1, or None when unknown.

    `resolve(tensor, index)` may answer `x.size(k)` / `x.shape[k]` from a known shape.
    """
    if isinstance(expr, ast.Constant) and isinstance(expr.value, int) and not isinstance(expr.value, bool):
        if expr.value == 1:
            return Dim(())
        return Dim((str(expr.value),)) if expr.value > 1 else None
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub) and isinstance(expr.operand, ast.Constant):
        return WILDCARD if expr.operand.value == 1 else None
    if isinstance(expr, (ast.Name, ast.Attribute)):
        name = dotted(expr)
        return Dim((name,)) if name else None
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult):
        left, right = dim_of(expr.left, resolve), dim_of(expr.right, resolve)
        if isinstance(left, Dim) and isinstance(right, Dim):
            return left.times(right)
        return None
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.FloorDiv):
        left, right = dotted(expr.left), dotted(expr.right)
        if left and right:
            return Dim((f"{left}//{right}",))
        return None
    reference = size_reference(expr)
    if reference is not None:
        tensor, index = reference
        known = resolve(tensor, index) if resolve else None
        if known is not None:
            return known
        symbol = size_symbol(tensor, index)
        return Dim((symbol,)) if symbol else None
    return None


def size_reference(expr: ast.AST) -> tuple[ast.AST, int] | None:
    """(`x`, k) for `x.size(k)`, `x.shape[k]`, `x.size()[k]`."""
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "size":
        if len(expr.args) == 1 and not expr.keywords:
            index = int_constant(expr.args[0])
            if index is not None:
                return expr.func.value, index
        return None
    if isinstance(expr, ast.Subscript):
        index = int_constant(expr.slice)
        base = expr.value
        if index is None:
            return None
        if isinstance(base, ast.Attribute) and base.attr == "shape":
            return base.value, index
        if (
            isinstance(base, ast.Call) and isinstance(base.func, ast.Attribute) and base.func.attr == "size"
            and not base.args and not base.keywords
        ):
            return base.func.value, index
    return None


def is_batch_size(expr: ast.AST) -> bool:
    """`B`, `batch_size`, `self.batch_size`, `x.size(0)`, `x.shape[0]`: a size that names the batch."""
    if isinstance(expr, ast.Name):
        return bool(BATCH_NAME.match(expr.id))
    if isinstance(expr, ast.Attribute):
        return bool(BATCH_NAME.match(expr.attr)) and len(expr.attr) > 1
    reference = size_reference(expr)
    return reference is not None and reference[1] == 0


# ----------------------------------------------------------------- shapes
@dataclass(frozen=True)
class KnownShape:
    """A tensor's rank, what we know of each size, and whether dim 0 is the batch."""

    dims: tuple[Dim | None, ...]
    batch_first: bool
    origin: str  # how we know, for messages: "`torch.bmm(...)` on line 18"
    stated_by: ast.AST | None = None  # the expression that states it, when it is one

    @property
    def rank(self) -> int:
        return len(self.dims)


_KNOWN_SHAPES: FactKey[dict[ast.AST, KnownShape | None]] = FactKey("shapes the code states, per node")


def shape_of(analysis: "Analysis", expr: ast.AST, depth: int = 0) -> KnownShape | None:
    """What the code states about the shape of `expr`, or None.

    Names resolve only to strictly earlier statements, so the chain of questions has no
    cycles; answers are memoised per node, which keeps chains that branch (`x = x @ x`
    repeated) linear.  `depth` only bounds very long chains."""
    cache = analysis.facts.get_or_compute(_KNOWN_SHAPES, dict)
    if expr in cache:
        return cache[expr]
    if depth > MAX_DEPTH:
        return None
    cache[expr] = shape = _shape_of(analysis, expr, depth)
    return shape


def _shape_of(analysis: "Analysis", expr: ast.AST, depth: int) -> KnownShape | None:
    if isinstance(expr, ast.Name):
        return _shape_of_name(analysis, expr, depth)
    if isinstance(expr, ast.Call):
        return _shape_of_call(analysis, expr, depth)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.MatMult):
        return _matmul_shape(analysis, expr.left, expr.right, depth)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Mult, ast.Div, ast.Add, ast.Sub)):
        if is_scalar_like(analysis, expr.right):
            return shape_of(analysis, expr.left, depth + 1)
        if is_scalar_like(analysis, expr.left):
            return shape_of(analysis, expr.right, depth + 1)
        return None
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        return shape_of(analysis, expr.operand, depth + 1)
    if isinstance(expr, ast.Subscript):
        base = shape_of(analysis, expr.value, depth + 1)
        return _indexed_shape(base, expr.slice) if base else None
    if isinstance(expr, ast.Attribute) and expr.attr in TRANSPOSING_ATTRIBUTES:
        return _transposed_shape(analysis, expr, expr.value, depth)
    return None


def is_scalar_like(analysis: "Analysis", expr: ast.AST) -> bool:
    """A number, a size (`x.size(-1)`), or a plain name/attribute/`math.*` call used as a
    scale (`scale`, `self.temperature`).  A plain name may also be a mask or bias
    (`scores + mask`); masks are built to the rank of the scores they are added to, so we
    accept that one with *more* dims (which would move dim 0) is not there."""
    if isinstance(expr, ast.Constant):
        return isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool)
    if isinstance(expr, (ast.Name, ast.Attribute)):
        return True
    if size_reference(expr) is not None:
        return True
    if isinstance(expr, ast.Call):
        qualname = analysis.call_qualname(expr) or ""
        return qualname.startswith("math.")
    if isinstance(expr, ast.BinOp):
        return is_scalar_like(analysis, expr.left) and is_scalar_like(analysis, expr.right)
    if isinstance(expr, ast.UnaryOp):
        return is_scalar_like(analysis, expr.operand)
    return False


def _shape_of_name(analysis: "Analysis", name: ast.Name, depth: int) -> KnownShape | None:
    assignment = reaching_assignment(analysis, name)
    if assignment is not None:
        stated = _comment_shape_of_assignment(analysis, assignment)
        if stated is not None:
            return stated
    unpacked = _unpacked_shape(analysis, name)
    if unpacked is not None:
        return unpacked
    if assignment is not None:
        return shape_of(analysis, assignment.value, depth + 1)
    last = analysis.roles_for(name).last_assignment(name.id, name)
    if last is None:
        return _commented_parameter_shape(analysis, name)
    if last.unpacked:
        return _unpacked_element_shape(analysis, name, last, depth)
    return None  # assigned, but not along a path we can follow


def _unpacked_element_shape(analysis: "Analysis", name: ast.Name, last: "Assignment", depth: int) -> KnownShape | None:
    """`q, k, v = qkv.unbind(0)` (or `= qkv`, `= x.chunk(3, dim=-1)`): the shape of one element."""
    stmt = last.statement
    if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
        return None
    target = stmt.targets[0]
    if not isinstance(target, (ast.Tuple, ast.List)) or not all(isinstance(e, ast.Name) for e in target.elts):
        return None
    if rebound_in_expression(analysis, name):
        return None
    use = analysis.statement_of(name)
    if use is None or not dominates(analysis, stmt, use):
        return None
    value = stmt.value
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and analysis.call_qualname(value) is None:
        method = value.func.attr
        if method not in ("unbind", "chunk", "split", "tensor_split"):
            return None
        base = shape_of(analysis, value.func.value, depth + 1)
        dim_argument = argument(value, 0 if method == "unbind" else 1, "dim")
        dim = int_constant(dim_argument) if dim_argument is not None else 0
    elif isinstance(value, (ast.Name, ast.Subscript)):
        method, dim = "unbind", 0  # unpacking a tensor iterates over dim 0
        base = shape_of(analysis, value, depth + 1)
    else:
        return None
    if base is None or dim is None or not -base.rank <= dim < base.rank:
        return None
    dim %= base.rank
    if method == "unbind":
        return _with_dims(base, base.dims[:dim] + base.dims[dim + 1:], keeps_dim0=dim != 0)
    return _with_dims(base, base.dims[:dim] + (None,) + base.dims[dim + 1:], keeps_dim0=True)


def _shape_of_call(analysis: "Analysis", call: ast.Call, depth: int) -> KnownShape | None:
    qualname = analysis.call_qualname(call)
    origin = f"`{_text(analysis, call)}` on line {call.lineno}"
    if qualname in BATCHED_MATMULS:
        return KnownShape((None, None, None), True, f"{origin}, whose dim 0 is the batch", call)
    if qualname == "torch.einsum":
        return _einsum_shape(call, origin, call)
    if qualname in FACTORIES:
        return _sizes_shape(analysis, call, call.args, origin)
    if qualname == "torch.reshape" and len(call.args) == 2:
        return _sizes_shape(analysis, call, [call.args[1]], origin)
    if qualname == "torch.matmul" and len(call.args) == 2:
        return _matmul_shape(analysis, call.args[0], call.args[1], depth)
    if qualname == "torch.flatten" and call.args:
        return _flattened_shape(analysis, call, call.args[0], call.args[1:], origin, depth)
    if qualname in SAME_SHAPE_FUNCTIONS and call.args:
        return shape_of(analysis, call.args[0], depth + 1)
    if qualname in TRANSPOSING_FUNCTIONS and call.args:
        return _transposed_shape(analysis, call, call.args[0], depth)
    if qualname is not None or not isinstance(call.func, ast.Attribute):
        return None
    method, tensor = call.func.attr, call.func.value
    if method in ("view", "reshape"):
        if len(call.args) == 1 and looks_like_dtype(analysis, call.args[0]):
            return None
        return _sizes_shape(analysis, call, call.args, origin)
    if method == "flatten":
        return _flattened_shape(analysis, call, tensor, call.args, origin, depth)
    if method in SAME_SHAPE_METHODS:
        if method in ("div", "mul", "add", "sub") and not all(is_scalar_like(analysis, a) for a in call.args):
            return None
        return shape_of(analysis, tensor, depth + 1)
    if is_transposing(analysis, call):
        return _transposed_shape(analysis, call, tensor, depth)
    return None


def _transposed_shape(analysis: "Analysis", expr: ast.AST, tensor: ast.AST, depth: int) -> KnownShape | None:
    base = shape_of(analysis, tensor, depth + 1)
    order = permutation(analysis, expr, base.rank if base else None)
    return permuted(base, order) if base and order else None


def _matmul_shape(analysis: "Analysis", left: ast.AST, right: ast.AST, depth: int) -> KnownShape | None:
    """`a @ b` for a and b of rank >= 2: broadcast batch dims, then [a's rows, b's columns]."""
    a, b = shape_of(analysis, left, depth + 1), shape_of(analysis, right, depth + 1)
    if a is None or b is None or a.rank < 2 or b.rank < 2:
        return None
    rank = max(a.rank, b.rank)
    batch = []
    for index in range(rank - 2):
        from_a = a.dims[index - (rank - a.rank)] if index >= rank - a.rank else None
        from_b = b.dims[index - (rank - b.rank)] if index >= rank - b.rank else None
        if index < rank - a.rank:
            batch.append(from_b)
        elif index < rank - b.rank:
            batch.append(from_a)
        else:
            batch.append(from_a if from_a == from_b else None)
    dims = tuple(batch) + (a.dims[-2], b.dims[-1])
    leading = a if a.rank >= b.rank else b  # dim 0 of the result is dim 0 of the higher-rank operand
    return KnownShape(dims, leading.batch_first, leading.origin, leading.stated_by)


def _indexed_shape(base: KnownShape, index: ast.AST) -> KnownShape | None:
    """`x[0]`, `x[:, 0]`, `x[..., 0]`, `x[:, None]`: integers drop dims, `None` adds one."""
    items = list(index.elts) if isinstance(index, ast.Tuple) else [index]
    ellipses = [i for i, item in enumerate(items) if isinstance(item, ast.Constant) and item.value is Ellipsis]
    if len(ellipses) > 1:
        return None
    if ellipses:
        cut = ellipses[0]
        consumed = sum(1 for item in items if not (isinstance(item, ast.Constant) and item.value in (None, Ellipsis)))
        filler = [ast.Slice() for _ in range(base.rank - consumed)]
        items = items[:cut] + filler + items[cut + 1:]
    dims: list[Dim | None] = []
    position = 0
    for item in items:
        if isinstance(item, ast.Constant) and item.value is None:
            dims.append(Dim(()))
            continue
        if position >= base.rank:
            return None
        if int_constant(item) is not None:
            position += 1
        elif isinstance(item, ast.Slice):
            full = item.lower is None and item.upper is None and item.step is None
            dims.append(base.dims[position] if full else None)
            position += 1
        else:
            return None  # tensor or name index: advanced indexing
    dims.extend(base.dims[position:])
    first_kept = isinstance(items[0], ast.Slice) if items else True
    return _with_dims(base, tuple(dims), keeps_dim0=first_kept)


def _flattened_shape(
    analysis: "Analysis", call: ast.Call, tensor: ast.AST, args: list[ast.AST], origin: str, depth: int
) -> KnownShape | None:
    """`x.flatten(1)`: [dim 0, everything else], which by convention keeps the batch in dim 0."""
    start = args[0] if args else next((kw.value for kw in call.keywords if kw.arg == "start_dim"), None)
    if int_constant(start) != 1 or len(args) > 1 or any(kw.arg not in ("start_dim",) for kw in call.keywords):
        return None
    base = shape_of(analysis, tensor, depth + 1)
    first = base.dims[0] if base is not None else None
    return KnownShape((first, None), True, origin, call)


def _sizes_shape(analysis: "Analysis", call: ast.Call, sizes: list[ast.AST], origin: str) -> KnownShape | None:
    """Shape from `view(B, N, -1)`-style sizes (or one tuple of them)."""
    if call.keywords and any(kw.arg in ("size", "shape") or kw.arg is None for kw in call.keywords):
        return None
    if len(sizes) == 1 and isinstance(sizes[0], (ast.Tuple, ast.List)):
        sizes = sizes[0].elts
    if not sizes or any(isinstance(s, ast.Starred) for s in sizes):
        return None
    if len(sizes) == 1 and not _is_int_expression(sizes[0]):
        return None
    dims = []
    for size in sizes:
        dim = dim_of(size)
        dims.append(dim if isinstance(dim, Dim) else None)
    return KnownShape(tuple(dims), is_batch_size(sizes[0]) and not _repeats_batch(sizes), origin, call)


def _repeats_batch(sizes: list[ast.AST]) -> bool:
    """`[B, B]` (a batch-by-batch similarity matrix): a softmax over dim 0 is intended there."""
    return sum(1 for s in sizes if is_batch_size(s)) > 1


def _einsum_shape(call: ast.Call, origin: str, stated_by: ast.AST) -> KnownShape | None:
    if not call.args or not isinstance(call.args[0], ast.Constant) or not isinstance(call.args[0].value, str):
        return None
    spec = call.args[0].value.replace(" ", "")
    if "->" not in spec or "." in spec:
        return None
    inputs, output = spec.split("->", 1)
    if not output.isalpha():
        return None
    # `b` leads the output and every operand carries it: a batch dim, not just a letter.
    batch_first = output[0] == "b" and output.count("b") == 1 and all("b" in op for op in inputs.split(","))
    return KnownShape(tuple(None for _ in output), batch_first, origin, stated_by)


def _text(analysis: "Analysis", node: ast.AST, limit: int = 48) -> str:
    """Short source text of a node, for the `origin` of a shape."""
    text = node_text(analysis.lines, node)
    if len(text) > limit and isinstance(node, ast.Call):
        return _text(analysis, node.func, limit) + "(...)"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _is_int_expression(expr: ast.AST) -> bool:
    """A single size that is surely an int (not a shape tuple held in a name)."""
    if isinstance(expr, ast.Constant):
        return isinstance(expr.value, int) and not isinstance(expr.value, bool)
    if isinstance(expr, ast.UnaryOp):
        return _is_int_expression(expr.operand)
    if isinstance(expr, ast.BinOp):
        return True
    return size_reference(expr) is not None or (
        isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "numel"
    )


def looks_like_dtype(analysis: "Analysis", expr: ast.AST) -> bool:
    """`torch.float16`, `np.uint8`, `dtype`, `self.dtype`: the argument of a dtype `view`."""
    qualname = analysis.qualname(expr) or ""
    if qualname.startswith(("torch.", "numpy.")):
        return True
    name = dotted(expr) or ""
    return "dtype" in name.rsplit(".", 1)[-1].lower()


# ------------------------------------------------------------ transposes
def is_transposing(analysis: "Analysis", expr: ast.AST) -> bool:
    """`x.transpose(...)`, `x.permute(...)`, `x.t()`, `x.T`, `torch.movedim(x, ...)`, ..."""
    if isinstance(expr, ast.Attribute):
        return expr.attr in TRANSPOSING_ATTRIBUTES
    if not isinstance(expr, ast.Call):
        return False
    qualname = analysis.call_qualname(expr)
    if qualname in TRANSPOSING_FUNCTIONS:
        return True
    func = expr.func
    if qualname is not None or not isinstance(func, ast.Attribute) or func.attr not in TRANSPOSING_METHODS:
        return False
    if isinstance(func.value, ast.Name) and func.value.id == "self":
        return False  # `self.t(x)`: a submodule named like a tensor method
    arity = len(expr.args) + len(expr.keywords)
    return {"t": arity == 0, "permute": arity >= 1}.get(func.attr, arity == 2)


def transposed_tensor(analysis: "Analysis", expr: ast.AST) -> ast.AST | None:
    """The tensor a transposing expression reorders (`x` in `x.transpose(1, 2)`)."""
    if isinstance(expr, ast.Attribute):
        return expr.value
    if analysis.call_qualname(expr) in TRANSPOSING_FUNCTIONS:
        return expr.args[0] if expr.args else None
    return expr.func.value


def _transpose_args(analysis: "Analysis", expr: ast.AST) -> tuple[str, list[ast.AST]] | None:
    """(operation, its dim arguments) for a transposing expression."""
    if isinstance(expr, ast.Attribute):
        return expr.attr, []
    if expr.keywords:
        return None
    if analysis.call_qualname(expr) in TRANSPOSING_FUNCTIONS:
        return analysis.call_qualname(expr).rsplit(".", 1)[1], list(expr.args[1:])
    return expr.func.attr, list(expr.args)


def permutation(analysis: "Analysis", expr: ast.AST, rank: int | None) -> tuple[int, ...] | None:
    """New order of the old dims (`(0, 2, 1)` for `transpose(1, 2)` of a 3-D tensor), or None.

    Without a known rank only `t()` (2-D) and `permute(...)` (which spells the rank) are known.
    """
    parsed = _transpose_args(analysis, expr)
    if parsed is None:
        return None
    operation, args = parsed
    if operation == "permute":
        if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
            args = args[0].elts
        order = [int_constant(a) for a in args]
        if not order or None in order:
            return None
        n = len(order)
        order = [o + n if o < 0 else o for o in order]
        return tuple(order) if sorted(order) == list(range(n)) else None
    if operation == "t" and not args:
        return (1, 0) if rank in (None, 2) else None
    if operation in ("T", "H") and rank is not None:
        return tuple(reversed(range(rank)))
    if operation in ("T", "H"):
        return (1, 0)
    if operation in ("mT", "mH"):
        return None if rank is None or rank < 2 else tuple(range(rank - 2)) + (rank - 1, rank - 2)
    if len(args) != 2 or rank is None:
        return None
    first, second = (int_constant(a) for a in args)
    if first is None or second is None or not (-rank <= first < rank and -rank <= second < rank):
        return None
    first, second = first % rank, second % rank
    order = list(range(rank))
    if operation in ("transpose", "swapaxes", "swapdims"):
        order[first], order[second] = order[second], order[first]
    else:  # movedim(source, destination)
        order.remove(first)
        order.insert(second, first)
    return tuple(order)


def is_identity_transpose(analysis: "Analysis", expr: ast.AST) -> bool:
    """`transpose(1, 1)`, `permute(0, 1, 2)`, `movedim(0, 0)`: no reordering at all."""
    parsed = _transpose_args(analysis, expr)
    if parsed is None:
        return False
    operation, args = parsed
    if operation == "permute":
        order = permutation(analysis, expr, None)
        return order is not None and order == tuple(range(len(order)))
    if len(args) == 2:
        first, second = (int_constant(a) for a in args)
        return first is not None and first == second
    return False


def permuted(base: KnownShape, order: tuple[int, ...]) -> KnownShape | None:
    """The shape after reordering dims to `order`."""
    if len(order) != base.rank:
        return None
    dims = tuple(base.dims[i] for i in order)
    return _with_dims(base, dims, keeps_dim0=order[0] == 0)


def _with_dims(base: KnownShape, dims: tuple[Dim | None, ...], keeps_dim0: bool) -> KnownShape:
    """`base` reshaped to `dims`: dim 0 is the batch if it stayed put, or if its size names the batch."""
    batch_first = base.batch_first if keeps_dim0 else names_the_batch(dims)
    return KnownShape(dims, batch_first, base.origin, base.stated_by)


def names_the_batch(dims: tuple[Dim | None, ...]) -> bool:
    """Dim 0 is `B` (or `batch_size`, `x.size(0)`, ...) and no other dim is."""
    named = [_is_batch_symbol(d) for d in dims]
    return bool(named) and named[0] and named.count(True) == 1


def _is_batch_symbol(dim: Dim | None) -> bool:
    if dim is None or len(dim.factors) != 1:
        return False
    factor = dim.factors[0]
    return bool(BATCH_NAME.match(factor.rsplit(".", 1)[-1])) or factor.endswith(".size(0)")


# ---------------------------------------------------------- view regroup
@dataclass(frozen=True)
class MergeGroup:
    """Consecutive dims of the transposed tensor that one `view` size merges."""

    old_order: tuple[int, ...]  # their order before the transpose (size-1 dims not counted)
    moved: bool  # at least one of them changed position in the transpose

    @property
    def keeps_memory_order(self) -> bool:
        """True when the merged dims were adjacent and in this order before the transpose."""
        return all(b == a + 1 for a, b in zip(self.old_order, self.old_order[1:]))


# One dim of a transposed tensor: (size, position before the transpose, position after).
TransposedDim = tuple[Dim, int, int]


def view_merges(dims: list[TransposedDim], sizes: list[Dim | str]) -> list[MergeGroup] | None:
    """How `view(*sizes)` regroups the dims of a transposed tensor.

    Returns the merge groups (empty when the view only keeps or splits dims, or adds and
    drops size-1 dims), or None when the sizes cannot be matched symbolically.
    """
    kept = [d for d in dims if not d[0].is_one]
    old_rank = {old: rank for rank, old in enumerate(sorted(d[1] for d in kept))}
    entries = [(size, old_rank[old], old != new) for size, old, new in kept]
    sizes = [s for s in sizes if not (isinstance(s, Dim) and s.is_one)]
    if sizes.count(WILDCARD) > 1:
        return None
    if WILDCARD not in sizes:
        matched = _match_prefix(entries, sizes)
        return matched[0] if matched is not None and matched[1] == len(entries) else None
    cut = sizes.index(WILDCARD)
    head = _match_prefix(entries, sizes[:cut])
    tail = _match_prefix(entries[::-1], sizes[cut + 1:][::-1])
    if head is None or tail is None or head[1] + tail[1] > len(entries):
        return None
    groups = head[0] + [MergeGroup(g.old_order[::-1], g.moved) for g in tail[0]]
    middle = entries[head[1]: len(entries) - tail[1]]
    if len(middle) > 1:
        groups.append(_group(middle))
    return groups


def _group(entries: list[tuple[Dim, int, bool]]) -> MergeGroup:
    return MergeGroup(tuple(old for _, old, _ in entries), any(moved for _, _, moved in entries))


def _match_prefix(entries: list[tuple[Dim, int, bool]], sizes: list[Dim]) -> tuple[list[MergeGroup], int] | None:
    """Match every size against a prefix of `entries`: (merge groups, entries used), or None."""
    groups: list[MergeGroup] = []
    i = j = 0
    while j < len(sizes):
        if i >= len(entries) or not isinstance(sizes[j], Dim):
            return None
        if sizes[j] == entries[i][0]:
            i, j = i + 1, j + 1
            continue
        merged_end = _product_reaches([e[0] for e in entries], i, sizes[j])
        if merged_end is not None:  # one size merges entries[i:merged_end]
            groups.append(_group(entries[i:merged_end]))
            i, j = merged_end, j + 1
            continue
        split_end = _product_reaches(sizes, j, entries[i][0])
        if split_end is None:  # entries[i] is split into sizes[j:split_end]
            return None
        i, j = i + 1, split_end
    return groups, i


def _product_reaches(dims: list, start: int, target: Dim) -> int | None:
    """The end of the shortest run `dims[start:end]` (two or more) whose product is `target`."""
    product = dims[start]
    for end in range(start + 1, len(dims)):
        if not isinstance(dims[end], Dim):
            return None
        product = product.times(dims[end])
        if product == target:
            return end + 1
    return None


# ------------------------------------------------------------ value flow


# ------------------------------------------------- shapes stated elsewhere
def _unpacked_shape(analysis: "Analysis", name: ast.Name) -> KnownShape | None:
    """`B, N, C = x.shape` (or `x.size()`) before the use, with `x` not rebound since."""
    roles = analysis.roles_for(name)
    use = analysis.statement_of(name)
    use_order = roles.order_of(name)
    last = roles.last_assignment(name.id, name)
    for stmt in reversed(roles.function.statements):
        order = roles.statement_order.get(stmt, 1 << 30)
        if order >= use_order or not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
            continue
        target, value = stmt.targets[0], stmt.value
        if not isinstance(target, (ast.Tuple, ast.List)) or not _is_shape_of(value, name.id):
            continue
        if last is not None and last.order > order:
            return None  # rebound after the unpacking
        if not all(isinstance(e, ast.Name) for e in target.elts) or not dominates(analysis, stmt, use):
            return None
        dims = tuple(None if e.id == "_" else Dim((e.id,)) for e in target.elts)
        batch_first = is_batch_size(target.elts[0]) and not _repeats_batch(target.elts)
        return KnownShape(dims, batch_first, f"`{_text(analysis, stmt, 60)}` on line {stmt.lineno}")
    return None


def _is_shape_of(value: ast.AST, name: str) -> bool:
    if isinstance(value, ast.Attribute) and value.attr == "shape":
        return isinstance(value.value, ast.Name) and value.value.id == name
    return (
        isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "size"
        and not value.args and isinstance(value.func.value, ast.Name) and value.func.value.id == name
    )


def _comment_shape_of_assignment(analysis: "Analysis", assignment: "Assignment") -> KnownShape | None:
    """`scores = ...  # [B, Q, N]` (trailing) or `# scores: [B, Q, N]` (on the line above)."""
    stmt = assignment.statement
    if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name):
        return None
    comment = trailing_comment(analysis.lines.line_text(stmt.end_lineno), stmt.end_col_offset)
    if comment and "->" not in comment:
        stated = _named_comment_shape(comment, assignment.name) or _bare_comment_shape(comment)
        if stated:
            return _comment_shape(stated, f"the comment `{comment.strip()}` on line {stmt.end_lineno}")
    above = analysis.lines.line_text(stmt.lineno - 1).strip()
    if above.startswith("#") and "->" not in above:
        stated = _named_comment_shape(above, assignment.name)
        if stated:
            return _comment_shape(stated, f"the comment `{above}` on line {stmt.lineno - 1}")
    return None


def _commented_parameter_shape(analysis: "Analysis", name: ast.Name) -> KnownShape | None:
    """`# tokens: [B, N, D]` in the function, above the use, for a parameter never rebound."""
    function = analysis.context(name).function
    if function.is_module or name.id not in function.params:
        return None
    for line in range(function.node.lineno, name.lineno):
        text = analysis.lines.line_text(line)
        if "#" not in text:
            continue
        comment = text[text.index("#"):] if line == function.node.lineno else text.strip()
        if not comment.startswith("#"):
            continue
        stated = _named_comment_shape(comment, name.id)
        if stated:
            return _comment_shape(stated, f"the comment `{comment.strip()}` on line {line}")
    return None


def _named_comment_shape(comment: str, name: str) -> str | None:
    match = re.search(rf"(?<![\w.]){re.escape(name)}\s*:?\s*(?:shape\s*)?(?=[\[(])", comment)
    if not match:
        return None
    shape = _COMMENT_SHAPE.match(comment, match.end())
    return shape.group(1) if shape else None


def _bare_comment_shape(comment: str) -> str | None:
    """`# [B, Q, N]`, `# shape: (B, N)`: a comment that is only a shape (no other name's)."""
    match = re.match(r"#\s*(?:shape\s*:?\s*)?(?=[\[(])", comment)
    if not match:
        return None
    shape = _COMMENT_SHAPE.match(comment, match.end())
    return shape.group(1) if shape else None


def _comment_shape(stated: str, origin: str) -> KnownShape:
    parts = [p.strip() for p in re.split(r"\s*(?:,|\bx\b|×)\s*", stated) if p.strip()]
    dims = []
    for part in parts:
        factors = [f for f in re.split(r"\s*\*\s*", part) if f]
        if any(f.isdigit() and int(f) == 1 for f in factors) and len(factors) == 1:
            dims.append(Dim(()))
        else:
            dims.append(Dim(tuple(sorted(f.replace(" ", "") for f in factors))))
    batch_names = [p for p in parts if BATCH_NAME.match(p)]
    batch_first = bool(BATCH_NAME.match(parts[0])) and len(batch_names) == 1
    return KnownShape(tuple(dims), batch_first, origin)



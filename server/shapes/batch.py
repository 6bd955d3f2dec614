"""The batch view of an inferred shape: is dim 0 of a tensor the batch, and how do we know (TL202).

`inferred_shape(analysis, node)` takes the rank and sizes from the shape pass
(`infer_shapes`) and says whether dim 0 is the batch.  It is, when

- the tensor was built so that dim 0 is the batch: `torch.bmm`/`baddbmm` (a batch of
  matrices), an einsum whose output and every operand lead with the letter `b`, or
  `x.flatten(1)` (keeps dim 0, flattens the rest: the batch-first convention); or
- a shape comment on the assignment states a batch-like name first (`# [B, Q, N]`); or
- the shape pass names dim 0 with a batch-like symbol (`B`, `bsz`, `batch_size`, from
  `B, T, C = x.shape`, `torch.zeros(B, N)`, a comment, an annotation).

In each case no other dim may have the batch's size: concrete sizes never say which dim
is the batch, and a `[B, B]` similarity matrix is meant to be normalised over dim 0.
The first two are found by following dim 0 back through what keeps it in place: names
surely assigned before the use (`roles.reaching_assignment`), element-wise arithmetic
with a scalar, `@`, indexing and transposes that leave dim 0 where it is, and
shape-preserving calls (`softmax`, `float`, `masked_fill`, ...).  The origin, for
messages, names what states the batch: the construction, the comment, or where the
shape pass took the shape from.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from torch_lsp.roles import reaching_assignment
from torch_lsp.shapes.dims import Dim, Symbol
from torch_lsp.shapes.stated import comment_shape
from torch_lsp.syntax_nodes import int_constant, node_text

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.shapes.values import Tensor

# Names people give the batch size.
BATCH_NAME = re.compile(
    r"^(?:b|bs|bsz|batch|batch_size|batchsize|batch_sz|n_batch|nbatch|num_batch|n_batches|num_batches|nb|n_b)$",
    re.IGNORECASE,
)
# How many dim-0-keeping steps are followed back.
MAX_STEPS = 40

BATCHED_MATMULS = {"torch.bmm", "torch.baddbmm"}
# Calls whose result has the shape of their tensor argument (or receiver, for methods),
# when their other operands are scalars or masks.
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
ELEMENTWISE_OPERATORS = (ast.Mult, ast.Div, ast.Add, ast.Sub)
# Transposes that leave dim 0 in place when their two dims are both >= 1.
SWAPS = {"transpose", "swapaxes", "swapdims"}


@dataclass(frozen=True)
class InferredShape:
    dims: tuple[Dim | None, ...]
    batch_first: bool
    origin: str  # "`torch.bmm(q, k)` on line 18", for messages
    stated_by: ast.AST | None = None  # the expression that builds the shape, when it is one
    rank_known: bool = True  # False: `dims` holds only the dims known to exist (a lower bound on the rank)

    @property
    def rank(self) -> int:
        return len(self.dims)


def inferred_shape(analysis: "Analysis", node: ast.AST) -> InferredShape | None:
    """The tensor `node` evaluates to, when its rank is known; None otherwise."""
    from torch_lsp.shapes import infer_shapes

    report = infer_shapes(analysis)
    tensor = report.symbolic_tensor_at(node)
    if tensor is None or tensor.rank is None:
        # `scores / temperature`, `-logits`: the shape pass cannot rule out that an unknown
        # scale broadcasts to more dims; as for following dim 0, a scale is taken as a scale.
        if isinstance(node, (ast.BinOp, ast.UnaryOp)) and not isinstance(getattr(node, "op", None), ast.MatMult):
            scaled = _keeps_dim0_of(analysis, node)
            return inferred_shape(analysis, scaled) if scaled is not None else None
        return _batched_matmul_of_unknown_rank(analysis, node)
    source = _dim0_source(analysis, node)
    built = _built_batch_first(analysis, source)
    if built is not None:
        return InferredShape(tensor.dims, True, built, source)
    stated = _stated_by_comment(analysis, source)
    if stated is not None:
        dims, origin = stated
        return InferredShape(tensor.dims, len(dims) == tensor.rank and names_the_batch(dims), origin)
    at_source = report.symbolic_tensor_at(source) or tensor
    origin = _origin_text(at_source) if at_source.origin is not None else f"the shape pass (line {node.lineno})"
    stated_by = source if not isinstance(source, ast.Name) else None
    return InferredShape(tensor.dims, names_the_batch(tensor.dims), origin, stated_by)


def _batched_matmul_of_unknown_rank(analysis: "Analysis", node: ast.AST) -> InferredShape | None:
    """`q @ k.transpose(1, 2)` (also through names and scales): the swap of two dims >= 1 shows
    an operand of rank >= 3, so the product is a batch of matrices whose dim 0 is a batch dim,
    whatever the exact ranks (the shape pass does not know them)."""
    source = node
    for _ in range(MAX_STEPS):
        if isinstance(source, ast.Subscript):
            return None  # indexing may drop dim 0
        if _is_matmul(analysis, source):
            break
        source = _keeps_dim0_of(analysis, source)
        if source is None:
            return None
    else:
        return None
    operands = source.args if isinstance(source, ast.Call) else (source.left, source.right)
    if not any(_swaps_behind_dim1(analysis, operand) for operand in operands):
        return None
    origin = f"`{_short_text(analysis, source)}` on line {source.lineno}, a batch of matrix products"
    return InferredShape((None, None, None), True, origin, source, rank_known=False)


def _is_matmul(analysis: "Analysis", node: ast.AST) -> bool:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        return True
    return isinstance(node, ast.Call) and analysis.call_qualname(node) == "torch.matmul" and len(node.args) == 2


def _swaps_behind_dim1(analysis: "Analysis", operand: ast.AST) -> bool:
    """`k.transpose(1, 2)`, `k.swapaxes(2, 1)`: two non-negative dims, one of them >= 2."""
    if isinstance(operand, ast.Name):
        assignment = reaching_assignment(analysis, operand)
        operand = assignment.value if assignment is not None else operand
    if not (isinstance(operand, ast.Call) and isinstance(operand.func, ast.Attribute)
            and operand.func.attr in SWAPS and len(operand.args) == 2 and not operand.keywords):
        return False
    first, second = (int_constant(a) for a in operand.args)
    return first is not None and second is not None and min(first, second) >= 0 and max(first, second) >= 2


def names_the_batch(dims: tuple[Dim | None, ...]) -> bool:
    """Dim 0 is one batch-like symbol (`B`, `bsz`, `batch_size`) and no other dim has its size."""
    if not dims or dims[0] is None:
        return False
    first = dims[0]
    terms = first.terms
    if len(terms) != 1 or terms[0][1] != 1 or len(terms[0][0]) != 1 or not isinstance(terms[0][0][0], Symbol):
        return False
    if not BATCH_NAME.match(terms[0][0][0].name.rsplit(".", 1)[-1]):
        return False
    return all(d != first for d in dims[1:])


def _origin_text(tensor: "Tensor") -> str:
    """`x.view(B, -1)` on line 4; origins that quote themselves (`the comment `# [B, N]``,
    `` `B, T, C = x.shape` ``) are not quoted again."""
    text = tensor.origin.text
    return f"{text if '`' in text else f'`{text}`'} on line {tensor.origin.line}"


# ------------------------------------------------------------- following dim 0
def _dim0_source(analysis: "Analysis", node: ast.AST) -> ast.AST:
    """The earliest expression whose dim 0 `node`'s dim 0 surely is (`node` itself when
    there is none): through names, element-wise ops with a scalar, `@`, indexing and
    transposes that keep dim 0, and shape-preserving calls.  A name whose assignment
    carries a shape comment stops there: the comment says what dim 0 is."""
    for _ in range(MAX_STEPS):
        previous = _keeps_dim0_of(analysis, node)
        if previous is None:
            return node
        node = previous
    return node


def _keeps_dim0_of(analysis: "Analysis", node: ast.AST) -> ast.AST | None:
    if isinstance(node, ast.Name):
        assignment = reaching_assignment(analysis, node)
        if assignment is None or _comment_of(analysis, assignment.statement, node.id) is not None:
            return None
        return assignment.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        return _leading_operand(analysis, node.left, node.right)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ELEMENTWISE_OPERATORS):
        if _is_scalar_like(analysis, node.right):
            return node.left
        return node.right if _is_scalar_like(analysis, node.left) else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return node.operand
    if isinstance(node, ast.Subscript):
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        return node.value if items and isinstance(items[0], ast.Slice) and _is_full(items[0]) else None
    if isinstance(node, ast.Call):
        return _call_keeps_dim0_of(analysis, node)
    return None


def _call_keeps_dim0_of(analysis: "Analysis", call: ast.Call) -> ast.AST | None:
    qualname = analysis.call_qualname(call)
    if qualname == "torch.matmul" and len(call.args) == 2:
        return _leading_operand(analysis, call.args[0], call.args[1])
    if qualname in SAME_SHAPE_FUNCTIONS and call.args:
        return call.args[0]
    if qualname is not None or not isinstance(call.func, ast.Attribute):
        return None
    method, tensor = call.func.attr, call.func.value
    if method in SAME_SHAPE_METHODS:
        if method in ("div", "mul", "add", "sub") and not all(_is_scalar_like(analysis, a) for a in call.args):
            return None
        return tensor
    if method in SWAPS and len(call.args) == 2 and not call.keywords:
        first, second = (int_constant(a) for a in call.args)
        return tensor if first is not None and second is not None and first >= 1 and second >= 1 else None
    if method == "permute" and call.args and not call.keywords:
        return tensor if int_constant(call.args[0]) == 0 else None
    return None


def _leading_operand(analysis: "Analysis", left: ast.AST, right: ast.AST) -> ast.AST | None:
    """Dim 0 of `a @ b` is dim 0 of the operand of higher rank (both of rank >= 2)."""
    from torch_lsp.shapes import infer_shapes

    report = infer_shapes(analysis)
    a, b = report.symbolic_tensor_at(left), report.symbolic_tensor_at(right)
    if a is None or b is None or a.rank is None or b.rank is None or a.rank < 2 or b.rank < 2:
        return None
    return left if a.rank >= b.rank else right


def _is_full(item: ast.Slice) -> bool:
    return item.lower is None and item.upper is None and item.step is None


def _is_scalar_like(analysis: "Analysis", expr: ast.AST) -> bool:
    """A number, a size (`x.size(-1)`), or a plain name/attribute/`math.*` call used as a
    scale (`scale`, `self.temperature`).  A plain name may also be a mask or bias
    (`scores + mask`); masks are built to the rank of the scores they are added to, so we
    accept that one with *more* dims (which would move dim 0) is not there."""
    if isinstance(expr, ast.Constant):
        return isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool)
    if isinstance(expr, (ast.Name, ast.Attribute)):
        return True
    if _is_size(expr):
        return True
    if isinstance(expr, ast.Call):
        return (analysis.call_qualname(expr) or "").startswith("math.")
    if isinstance(expr, ast.BinOp):
        return _is_scalar_like(analysis, expr.left) and _is_scalar_like(analysis, expr.right)
    if isinstance(expr, ast.UnaryOp):
        return _is_scalar_like(analysis, expr.operand)
    return False


def _is_size(expr: ast.AST) -> bool:
    """`x.size(k)`, `x.shape[k]`, `x.size()[k]`."""
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "size":
        return len(expr.args) == 1 and not expr.keywords and int_constant(expr.args[0]) is not None
    if isinstance(expr, ast.Subscript) and int_constant(expr.slice) is not None:
        base = expr.value
        if isinstance(base, ast.Attribute) and base.attr == "shape":
            return True
        return (isinstance(base, ast.Call) and isinstance(base.func, ast.Attribute) and base.func.attr == "size"
                and not base.args and not base.keywords)
    return False


# --------------------------------------------------------------- what says so
def _built_batch_first(analysis: "Analysis", source: ast.AST) -> str | None:
    """The origin text when `source` is built with the batch in dim 0, else None."""
    if not isinstance(source, ast.Call):
        return None
    qualname = analysis.call_qualname(source)
    origin = f"`{_short_text(analysis, source)}` on line {source.lineno}"
    if qualname in BATCHED_MATMULS:
        return f"{origin}, whose dim 0 is the batch"
    if qualname == "torch.einsum" and _einsum_batch_first(source):
        return origin
    if _flattens_behind_dim0(analysis, source):
        return origin
    return None


def _einsum_batch_first(call: ast.Call) -> bool:
    """`b` leads the explicit output and every operand carries it: a batch dim, not just a letter."""
    if not call.args or not isinstance(call.args[0], ast.Constant) or not isinstance(call.args[0].value, str):
        return False
    spec = call.args[0].value.replace(" ", "")
    if "->" not in spec or "." in spec:
        return False
    inputs, output = spec.split("->", 1)
    return output.isalpha() and output[0] == "b" and output.count("b") == 1 and all(
        "b" in operand for operand in inputs.split(","))


def _flattens_behind_dim0(analysis: "Analysis", call: ast.Call) -> bool:
    """`x.flatten(1)`, `torch.flatten(x, 1)`, `x.flatten(start_dim=1)`."""
    if analysis.call_qualname(call) == "torch.flatten":
        args = call.args[1:]
    elif analysis.call_qualname(call) is None and isinstance(call.func, ast.Attribute) and call.func.attr == "flatten":
        args = call.args
    else:
        return False
    start = args[0] if args else next((kw.value for kw in call.keywords if kw.arg == "start_dim"), None)
    return int_constant(start) == 1 and len(args) <= 1 and all(kw.arg == "start_dim" for kw in call.keywords)


def _stated_by_comment(analysis: "Analysis", source: ast.AST) -> tuple[tuple[Dim | None, ...], str] | None:
    """(the dims, the origin text) a shape comment on `source`'s assignment states."""
    if not isinstance(source, ast.Name):
        return None
    assignment = reaching_assignment(analysis, source)
    if assignment is None:
        return None
    stated = _comment_of(analysis, assignment.statement, source.id)
    if stated is None:
        return None
    return stated.dims, f"{stated.origin.text} on line {stated.origin.line}"


def _comment_of(analysis: "Analysis", stmt: ast.stmt, name: str):
    """The shape a comment states for `name = ...` (a plain single-name assignment)."""
    if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name):
        return None
    stated = comment_shape(analysis.lines, stmt, name)
    return stated if stated is not None and not stated.variadic else None


def _short_text(analysis: "Analysis", node: ast.AST, limit: int = 48) -> str:
    """Short source text of a node, for an origin."""
    text = node_text(analysis.lines, node)
    if len(text) > limit and isinstance(node, ast.Call):
        return _short_text(analysis, node.func, limit) + "(...)"
    return text if len(text) <= limit else text[: limit - 3] + "..."

"""TL2xx — silent correctness: code that runs, or runs once, and computes the wrong thing.

Every rule here resolves torch names through the imports (`F.softmax` is
`torch.nn.functional.softmax`) and follows values only through local assignments
that surely ran before the use (`server.shapes.rank.reaching_assignment`).  What
cannot be followed is unknown, and unknown is silent.
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator

from server.diagnostics import register
from server.diagnostics.base import Finding, Rule
from server.roles import class_attribute_roles, self_attribute_values
from server.shapes.batch import inferred_shape
from server.shapes.rank import (
    Dim,
    WILDCARD,
    dim_of,
    int_constant,
    is_batch_size,
    is_identity_transpose,
    is_transposing,
    looks_like_dtype,
    node_text,
    permutation,
    reaching_assignment,
    shape_of,
    size_symbol,
    trailing_comment,
    transposed_tensor,
    view_merges,
)
from server.syntax_nodes import argument, call_name, dotted, has_star_args, is_none, is_self_attribute, receiver

if TYPE_CHECKING:
    from server.analysis import Analysis

# ---------------------------------------------------------------- torch names
FUNCTIONAL_SOFTMAX = {
    "torch.nn.functional.softmax": "softmax",
    "torch.nn.functional.log_softmax": "log_softmax",
    "torch.nn.functional.softmin": "softmin",
}
# These require `dim` (they raise without it), so they only matter to TL202.
TORCH_SOFTMAX = {
    "torch.softmax": "softmax",
    "torch.log_softmax": "log_softmax",
    "torch.special.softmax": "softmax",
    "torch.special.log_softmax": "log_softmax",
}
SOFTMAX_METHODS = {"softmax", "log_softmax"}
SOFTMAX_MODULES = {"Softmax": "softmax", "LogSoftmax": "log_softmax", "Softmin": "softmin"}
SIGMOID_FUNCTIONS = {"torch.sigmoid", "torch.nn.functional.sigmoid", "torch.special.expit"}
CROSS_ENTROPY_FUNCTIONS = {"torch.nn.functional.cross_entropy": "cross_entropy"}
LOGITS_LOSS_FUNCTIONS = {"torch.nn.functional.binary_cross_entropy_with_logits": "bce_with_logits"}
LOSS_MODULES = {"CrossEntropyLoss": "cross_entropy", "BCEWithLogitsLoss": "bce_with_logits"}

# torch functions that return one tensor.
TENSOR_FUNCTIONS = {
    "cat", "concat", "concatenate", "stack", "hstack", "vstack", "zeros", "ones", "empty", "full", "rand", "randn",
    "randint", "randperm", "arange", "linspace", "logspace", "eye", "zeros_like", "ones_like", "empty_like",
    "full_like", "rand_like", "randn_like", "tensor", "as_tensor", "from_numpy", "matmul", "mm", "bmm", "einsum",
    "exp", "log", "sigmoid", "tanh", "softmax", "log_softmax", "cumsum", "flatten", "reshape", "cdist", "outer",
    "clamp", "abs", "sqrt", "mean", "sum", "diag", "tril", "triu", "cross", "normal",
}
TENSOR_FUNCTIONAL = {
    "normalize", "softmax", "log_softmax", "relu", "gelu", "silu", "linear", "one_hot", "pad", "interpolate",
    "embedding", "sigmoid", "dropout", "conv1d", "conv2d", "conv3d",
}
# Tensor methods whose result is again a tensor.
TENSOR_METHODS = {
    "detach", "clone", "float", "double", "half", "bfloat16", "long", "int", "bool", "to", "cpu", "cuda",
    "contiguous", "view", "reshape", "squeeze", "unsqueeze", "flatten", "t", "permute", "transpose", "mean", "sum",
    "abs", "exp", "log", "sigmoid", "softmax", "log_softmax", "type_as", "expand", "repeat", "norm",
}
# Methods that change a tensor's shape or dtype but not what its values mean.
VALUE_KEEPING_METHODS = {
    "view", "reshape", "flatten", "squeeze", "unsqueeze", "contiguous", "float", "double", "half", "to", "permute",
    "transpose", "cpu", "cuda", "type_as",
}
MODULE_MOVES = {"to", "cuda", "cpu", "float", "half", "double", "train", "eval"}
MAX_DEPTH = 8


# ------------------------------------------------------------------ helpers
def source_of(analysis: "Analysis", node: ast.AST, limit: int = 60) -> str:
    """Short source text of a node for a message: `F.softmax(scores)`, `criterion(...)`."""
    text = node_text(analysis, node)
    if len(text) <= limit:
        return text
    if isinstance(node, ast.Call):
        return source_of(analysis, node.func, limit) + "(...)"
    return text[: limit - 3] + "..."


def torch_module_class(analysis: "Analysis", call: ast.AST) -> str | None:
    """`Softmax` for `nn.Softmax(...)`, `torch.nn.modules.activation.Softmax(...)`; else None."""
    if not isinstance(call, ast.Call):
        return None
    qualname = analysis.call_qualname(call) or ""
    if not qualname.startswith("torch.nn."):
        return None
    module, _, name = qualname.rpartition(".")
    if module == "torch.nn" or module.startswith("torch.nn.modules"):
        return name
    return None


def without_moves(value: ast.AST) -> ast.AST:
    """`nn.CrossEntropyLoss()` in `nn.CrossEntropyLoss().to(device)`."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in MODULE_MOVES:
        value = value.func.value
    return value


def module_constructor(analysis: "Analysis", func: ast.AST, through_callers: bool = True) -> ast.Call | None:
    """The constructor call that built the module a call runs: `nn.CrossEntropyLoss(...)`
    for `criterion(...)` (a local or module-level name, or a parameter every caller in the
    file passes the same kind of module) or `self.criterion(...)` (set in the class), or
    None when the binding is not one plain constructor."""
    if isinstance(func, ast.Call):
        return func
    if isinstance(func, ast.Name):
        return _constructor_of_name(analysis, func, through_callers)
    if is_self_attribute(func):
        return _constructor_of_attribute(analysis, func)
    return None


def _constructor_of_name(analysis: "Analysis", name: ast.Name, through_callers: bool) -> ast.Call | None:
    if name.id in analysis.imports or analysis.function_named(name.id) or name.id in analysis.classes:
        return None  # an imported or locally defined function or class, not a module instance
    assignment = reaching_assignment(analysis, name)
    if assignment is not None:
        value = without_moves(assignment.value)
        return value if isinstance(value, ast.Call) else None
    roles = analysis.roles_for(name)
    function = roles.function
    if function.is_module or name.id in roles.assignments:
        return None  # a local whose value we cannot follow
    if name.id in function.params:
        return _constructor_from_callers(analysis, function, name.id) if through_callers else None
    if bound_in_enclosing_function(analysis, function, name.id):
        return None  # a closure variable, not the module-level name
    bindings = analysis.roles[analysis.module_scope].assignments.get(name.id, [])
    return _single_constructor(analysis, [b.value for b in bindings if not b.unpacked], len(bindings))


def _constructor_from_callers(analysis: "Analysis", function, param: str) -> ast.Call | None:
    """`def train(model, loader, criterion)`: the module every call of `train` in this file
    passes as `criterion` (one level of callers; a caller's own parameters stop the search)."""
    constructors = []
    for site in analysis.callers(function):
        passed = analysis.argument_for(site, function, param)
        if passed is None or has_star_args(site):
            return None  # the default, or something we cannot see
        constructor = module_constructor(analysis, passed, through_callers=False)
        if constructor is None:
            return None
        constructors.append(constructor)
    return _single_constructor(analysis, constructors, len(constructors))


def bound_in_enclosing_function(analysis: "Analysis", function, name: str) -> bool:
    """`name` is a parameter or local of a `def` that encloses `function`."""
    node = analysis.parents.get(function.node)
    while node is not None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for outer in analysis.functions:
                if outer.node is node and (name in outer.params or name in analysis.roles[outer].assignments):
                    return True
        node = analysis.parents.get(node)
    return False


def _constructor_of_attribute(analysis: "Analysis", attribute: ast.Attribute) -> ast.Call | None:
    cls = analysis.context(attribute).function.class_node
    if cls is None:
        return None
    values = self_attribute_values(analysis, cls).get(attribute.attr, [])
    return _single_constructor(analysis, values, len(values))


def _single_constructor(analysis: "Analysis", values: list, expected: int) -> ast.Call | None:
    """The constructor when every binding calls the same one; else None."""
    calls = [without_moves(v) for v in values if v is not None]
    if not calls or len(calls) != expected or not all(isinstance(c, ast.Call) for c in calls):
        return None
    names = {analysis.call_qualname(c) for c in calls}
    return calls[-1] if len(names) == 1 and None not in names else None


def followed(analysis: "Analysis", expr: ast.AST) -> tuple[ast.AST, ast.Name | None]:
    """A local name's value (the one surely assigned last), once; else the expression itself."""
    if isinstance(expr, ast.Name):
        assignment = reaching_assignment(analysis, expr)
        if assignment is not None:
            return assignment.value, expr
    return expr, None


# ==================================================================== TL201
@register
class SoftmaxImplicitDim(Rule):
    """## What it does
    Flags `F.softmax`, `F.log_softmax` and `F.softmin` called without `dim`, and
    `nn.Softmax()`, `nn.LogSoftmax()` and `nn.Softmin()` constructed without `dim`.

    ## Why is this bad
    Without `dim`, PyTorch guesses the axis from the input's rank: dim 0 for 0-, 1- and
    3-D input, dim 1 otherwise. For a batch of sequences (`[B, N, C]`) that is the batch
    axis, so every sample's probabilities depend on the rest of the batch. The guess is
    deprecated and warns on every call.

    ## Example
    ```python
    attn = F.softmax(scores)
    self.log_probs = nn.LogSoftmax()
    ```

    ## Use instead
    ```python
    attn = F.softmax(scores, dim=-1)
    self.log_probs = nn.LogSoftmax(dim=-1)
    ```
    """

    code = "TL201"
    name = "softmax-implicit-dim"
    severity = "warning"
    fix_safety = "safe"

    def check(self, analysis: "Analysis") -> Iterator[Finding]:
        for call in analysis.calls:
            if has_star_args(call):
                continue
            qualname = analysis.call_qualname(call)
            if qualname in FUNCTIONAL_SOFTMAX:
                dim = argument(call, 1, "dim")
                what = "the implicit choice is deprecated and picks"
            elif torch_module_class(analysis, call) in SOFTMAX_MODULES:
                dim = argument(call, 0, "dim")
                what = "the module then guesses the axis on every call, picking"
            else:
                continue
            if dim is not None and not is_none(dim):
                continue
            text = source_of(analysis, call)
            lacks = "has no `dim`" if dim is None else "passes `dim=None`"
            yield self.finding(
                call,
                f"`{text}` {lacks}: {what} dim 0 for 0-, 1- and 3-D input (the batch axis of a [B, N, C] "
                "tensor). Pass `dim=-1` (or the axis you mean).",
                "Add `dim=-1`" if dim is None else "Replace `dim=None` with `dim=-1`",
            )


# ==================================================================== TL202
@register
class SoftmaxOverBatch(Rule):
    """## What it does
    Flags a softmax (`softmax`, `log_softmax`, `softmin`, as function, method or
    `nn.Softmax(dim=0)` module) taken over dim 0 of a tensor whose dim 0 is known to be
    the batch: a `torch.bmm`/`baddbmm` result, `x.view(B, -1)`, `x.flatten(1)`,
    `torch.zeros(B, N)`, `B, N, C = x.shape`, or a shape comment such as `# [B, Q, N]`
    (and what follows from those through `@`, indexing and element-wise ops).
    Sequence-first layouts (`[T, B, D]`) and batch-by-batch matrices are not reported.

    ## Why is this bad
    Normalising across the batch makes each sample's probabilities depend on which
    other samples share its batch: results change with the batch size and order,
    and evaluation no longer matches training. It raises no error, so it survives
    until someone notices the metrics.

    ## Example
    ```python
    scores = torch.bmm(q, k.transpose(1, 2))  # [B, Q, N]
    attn = F.softmax(scores, dim=0)
    ```

    ## Use instead
    ```python
    scores = torch.bmm(q, k.transpose(1, 2))  # [B, Q, N]
    attn = F.softmax(scores, dim=-1)
    ```
    """

    code = "TL202"
    needs_shapes = True
    name = "softmax-over-batch"
    severity = "warning"
    fix_safety = "unsafe"

    def check(self, analysis: "Analysis") -> Iterator[Finding]:
        for call in analysis.calls:
            form = softmax_application(analysis, call)
            if form is None:
                continue
            reported, tensor, dim = form
            axis = int_constant(dim)
            if axis is None or axis > 0:
                continue
            shape = shape_of(analysis, tensor) or inferred_shape(analysis, tensor)
            if shape is None or shape.rank < 2 or not shape.batch_first or axis not in (0, -shape.rank):
                continue
            name = source_of(analysis, tensor, 40)
            origin = "" if shape.stated_by is tensor else f" (from {shape.origin})"
            subject = f"`{source_of(analysis, call)}`"
            if reported is not call and reported is not call.func:
                subject = f"`{source_of(analysis, reported)}` (applied as {subject} on line {call.lineno})"
            yield self.finding(
                reported,
                f"{subject} normalises across the batch: dim {axis} of `{name}` is the batch"
                f"{origin}, so each sample's probabilities depend on the rest of its batch. "
                "Use `dim=-1` (or the axis you mean).",
                f"Replace `dim={axis}` with `dim=-1`",
            )


def softmax_application(analysis: "Analysis", call: ast.Call) -> tuple[ast.AST, ast.AST, ast.AST | None] | None:
    """(node to report, input tensor, dim argument) for a softmax-family call, else None."""
    if has_star_args(call):
        return None
    qualname = analysis.call_qualname(call)
    if qualname in FUNCTIONAL_SOFTMAX or qualname in TORCH_SOFTMAX:
        tensor = argument(call, 0, "input")
        return (call, tensor, argument(call, 1, "dim")) if tensor is not None else None
    if qualname is None and isinstance(call.func, ast.Attribute) and call.func.attr in SOFTMAX_METHODS:
        return call, call.func.value, argument(call, 0, "dim")
    if len(call.args) != 1 or call.keywords or not _may_run_a_module(call.func):
        return None
    constructor = module_constructor(analysis, call.func)  # `nn.Softmax(dim=0)(x)`, `self.softmax(x)`
    if torch_module_class(analysis, constructor) in SOFTMAX_MODULES and not has_star_args(constructor):
        return constructor, call.args[0], argument(constructor, 0, "dim")
    return None


def _may_run_a_module(func: ast.AST) -> bool:
    """`m(x)`, `self.m(x)` or `nn.Softmax(dim=0)(x)`."""
    if isinstance(func, (ast.Name, ast.Call)):
        return True
    return is_self_attribute(func)


# ==================================================================== TL203
@register
class ViewAfterTranspose(Rule):
    """## What it does
    Flags `.view(...)` on the result of `transpose`, `permute`, `t`, `.T`, `.mT`,
    `swapaxes` or `movedim` (chained, or through a local variable) with no
    `.contiguous()` in between, when the new shape merges dims the transpose moved.

    ## Why is this bad
    A transpose only changes strides; the elements stay where they were. `view` can
    merge dims only when they are adjacent in memory, so merging dims that the
    transpose separated raises `RuntimeError: view size is not compatible with input
    tensor's size and stride`. Merges that happen to line up still break as soon as
    the input arrives sliced or otherwise non-contiguous.

    ## Example
    ```python
    B, h, N, d = x.shape
    return x.transpose(1, 2).view(B, N, h * d)
    ```

    ## Use instead
    ```python
    B, h, N, d = x.shape
    return x.transpose(1, 2).reshape(B, N, h * d)
    ```
    """

    code = "TL203"
    name = "view-after-transpose"
    severity = "error"
    fix_safety = "safe"

    def check(self, analysis: "Analysis") -> Iterator[Finding]:
        for call in analysis.iter_calls("view"):
            if not _is_shape_view(analysis, call):
                continue
            transposing, via = followed(analysis, call.func.value)
            if not is_transposing(analysis, transposing) or is_identity_transpose(analysis, transposing):
                continue
            if _undoes_a_transpose(analysis, transposing):
                continue
            verdict = view_verdict(analysis, call, transposing, via)
            if verdict is None:
                continue
            yield self.finding(call, self._message(analysis, call, transposing, via, verdict),
                               "Replace `.view(...)` with `.reshape(...)`")

    @staticmethod
    def _message(analysis: "Analysis", call: ast.Call, transposing: ast.AST, via: ast.Name | None, verdict: str) -> str:
        view = ".view(" + ", ".join(source_of(analysis, arg, 30) for arg in call.args) + ")"
        origin = f"`{source_of(analysis, transposing)}`"
        if via is not None:
            origin = f"`{via.id}` ({origin} on line {transposing.lineno})"
        if verdict == "raises":
            return (
                f"`{view}` merges dims that {origin} moved apart, so they are not adjacent in memory and `view` "
                "raises a RuntimeError (\"view size is not compatible with input tensor's size and stride\"). "
                "Use `.reshape(...)` (or call `.contiguous()` first)."
            )
        tensor = source_of(analysis, transposed_tensor(analysis, transposing), 30)
        if verdict == "channels_last":
            return (
                f"`{view}` merges dims that {origin} moved apart: `view` succeeds only when `{tensor}` is stored "
                "channels-last, and raises a RuntimeError for the default contiguous layout. "
                "Use `.reshape(...)`, which copies only when it has to."
            )
        return (
            f"`{view}` merges dims that {origin} reordered; `view` succeeds only while `{tensor}` is contiguous "
            "and raises a RuntimeError for sliced or otherwise non-contiguous input. "
            "Use `.reshape(...)`, which copies only when it has to."
        )


def _undoes_a_transpose(analysis: "Analysis", transposing: ast.AST) -> bool:
    """`w.t().t()` or `wt.t()` with `wt = w.t()`: the second transpose may restore memory order."""
    tensor = transposed_tensor(analysis, transposing)
    value, _ = followed(analysis, tensor) if tensor is not None else (None, None)
    return tensor is None or is_transposing(analysis, tensor) or is_transposing(analysis, value)


def _is_shape_view(analysis: "Analysis", call: ast.Call) -> bool:
    """`t.view(B, N, C)`, not `t.view(torch.float16)` (a dtype view) nor `torch.*.view`."""
    if not isinstance(call.func, ast.Attribute) or call.func.attr != "view":
        return False
    if analysis.call_qualname(call) is not None or call.keywords or not call.args or has_star_args(call):
        return False
    return not (len(call.args) == 1 and looks_like_dtype(analysis, call.args[0]))


def view_verdict(analysis: "Analysis", view: ast.Call, transposing: ast.AST, via: ast.Name | None) -> str | None:
    """"raises" when the view surely merges dims the transpose separated (for a contiguous
    input), "channels_last" when that permute is the one a channels-last input undoes,
    "layout" when it merges moved dims that happen to stay in memory order, None when the
    view is fine or we cannot tell."""
    tensor = transposed_tensor(analysis, transposing)
    if tensor is None:
        return None
    known = shape_of(analysis, tensor)
    order = permutation(analysis, transposing, known.rank if known else None)
    if order is None:
        return None if handles_unit_dims(analysis, tensor) else _flatten_verdict(analysis, view, transposing)
    if known is not None and known.rank != len(order):
        return None
    base_dims = _symbolic_dims(tensor, known, len(order))
    dims = [(base_dims[old], old, new) for new, old in enumerate(order)]

    def resolve(reference: ast.AST, index: int) -> Dim | None:
        name = dotted(reference)
        if name is not None and name == dotted(tensor) and -len(base_dims) <= index < len(base_dims):
            return base_dims[index]
        if via is not None and name == via.id and -len(dims) <= index < len(dims):
            return dims[index][0]
        return None

    sizes = _view_sizes(view, resolve)
    groups = view_merges(dims, sizes) if sizes is not None else None
    if groups is None:
        verdict = None if handles_unit_dims(analysis, tensor) else _rank_verdict(view, dims)
    elif any(not g.keeps_memory_order for g in groups):
        verdict = "raises"
    else:
        verdict = "layout" if any(g.moved for g in groups) else None
    if verdict == "raises" and is_channels_last_permutation(order):
        return "channels_last"  # contiguous again when the input is stored channels-last
    return verdict


def is_channels_last_permutation(order: tuple[int, ...]) -> bool:
    """`(0, 2, 3, 1)` (NCHW -> NHWC) and `(0, 2, 3, 4, 1)`: the permutes that turn a
    channels-last tensor into a contiguous one."""
    return len(order) in (4, 5) and order == (0, *range(2, len(order)), 1)


def _symbolic_dims(tensor: ast.AST, known, rank: int) -> list[Dim]:
    """Each dim's size as stated, else as `x.size(k)`, else an opaque symbol of its own."""
    dims = []
    for index in range(rank):
        dim = known.dims[index] if known is not None else None
        if dim is None:
            dim = Dim((size_symbol(tensor, index) or f"<dim {index}>",))
        dims.append(dim)
    return dims


def handles_unit_dims(analysis: "Analysis", tensor: ast.AST) -> bool:
    """The tensor went through `squeeze`/`unsqueeze`/`[None]`: size-1 dims are in play, and a
    transpose that moves only a size-1 dim keeps memory order (`w.squeeze(0).t().view(-1)`
    on a `[1, 1, T]` waveform works).  Verdicts that assume sizes > 1 stay silent then."""
    node, steps = tensor, 0
    while node is not None and steps < MAX_DEPTH:
        steps += 1
        if isinstance(node, ast.Name):
            node, via = followed(analysis, node)
            if via is None:
                return False
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in ("squeeze", "unsqueeze", "squeeze_", "unsqueeze_"):
                return True
            node = node.func.value
        elif isinstance(node, ast.Subscript):
            index = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if any(is_none(item) for item in index):
                return True
            node = node.value
        else:
            return False
    return False


def _rank_verdict(view: ast.Call, dims: list[tuple[Dim, int, int]]) -> str | None:
    """Sizes we cannot match symbolically, so count instead.  `view` with m sizes can keep
    at most m - 1 of the gaps between neighbouring dims; every other gap is merged.  A merged
    gap between dims that were not neighbours in order before the transpose raises, so when
    there are more such broken gaps than m - 1, the view raises whatever the sizes are
    (`(attn @ v).transpose(1, 2).view(B, N, C)` on a 4-D tensor, or
    `logits.permute(0, 2, 3, 1).view(-1, C)`).  Assumes sizes > 1: a literal 1 among the
    sizes hints at size-1 dims, and then it says nothing."""
    sizes = _view_arguments(view)
    if any(int_constant(size) == 1 for size in sizes) or (len(sizes) == 1 and not _is_flat_size(sizes[0])):
        return None  # `view(shape)`: one name may hold a whole shape
    kept = [old for dim, old, _ in dims if not dim.is_one]
    rank_of = {old: rank for rank, old in enumerate(sorted(kept))}
    order = [rank_of[old] for old in kept]
    broken_gaps = sum(1 for before, after in zip(order, order[1:]) if after != before + 1)
    return "raises" if broken_gaps > len(sizes) - 1 else None


def _view_arguments(view: ast.Call) -> list[ast.AST]:
    """The sizes of `view(B, N, C)` or `view((B, N, C))`."""
    if len(view.args) == 1 and isinstance(view.args[0], (ast.Tuple, ast.List)):
        return list(view.args[0].elts)
    return list(view.args)


def _view_sizes(view: ast.Call, resolve) -> list[Dim | str] | None:
    args = _view_arguments(view)
    if len(args) == 1:  # one number is the whole element count; one name may hold a whole shape
        return [WILDCARD] if _is_flat_size(args[0]) else None
    sizes = [dim_of(arg, resolve) for arg in args]
    return None if any(size is None for size in sizes) else sizes


def _is_flat_size(arg: ast.AST) -> bool:
    """A lone `view(n)` argument that is surely a number (`-1`, `n * m`, `x.numel()`)."""
    if int_constant(arg) is not None:
        return True
    if isinstance(arg, ast.BinOp):
        return True
    return isinstance(arg, ast.Call) and call_name(arg) == "numel"


def _flatten_verdict(analysis: "Analysis", view: ast.Call, transposing: ast.AST) -> str | None:
    """The rank is unknown.  Still surely raising: flattening a reordered tensor
    (`x.transpose(0, 1).view(-1)`, `w.T.view(-1)`), and `view(B, -1)` after a transpose of
    two dims behind the batch (`x.transpose(1, 2).view(B, -1)` merges the swapped pair)."""
    sizes = _view_arguments(view)
    flat = len(sizes) == 1 and _is_flat_size(sizes[0])
    keeps_batch = len(sizes) == 2 and is_batch_size(sizes[0]) and int_constant(sizes[1]) == -1
    if not (flat or keeps_batch):
        return None
    if isinstance(transposing, ast.Attribute):  # `.T`, `.mT`: a reorder of the last dims
        return "raises" if flat else None
    if call_name(transposing) not in ("transpose", "swapaxes", "swapdims") or len(transposing.args) < 2:
        return None
    first, second = (int_constant(a) for a in transposing.args[-2:])
    if first is None or second is None or first == second:
        return None
    if flat:
        return "raises" if (first < 0) == (second < 0) else None
    return "raises" if first >= 1 and second >= 1 else None


# ==================================================================== TL204
@register
class UncheckedStrictFalse(Rule):
    """## What it does
    Flags `module.load_state_dict(state, strict=False)` used as a statement, its
    result (the missing and unexpected keys) thrown away.

    ## Why is this bad
    `strict=False` tells PyTorch not to raise when the checkpoint and the model
    disagree; the returned `missing_keys` and `unexpected_keys` are then the only
    record of what did not load. Discarding them means a renamed layer or a wrong
    prefix (`module.`) silently leaves weights at their random initialisation.

    ## Example
    ```python
    model.load_state_dict(state, strict=False)
    ```

    ## Use instead
    ```python
    missing, unexpected = model.load_state_dict(state, strict=False)
    if unexpected:
        raise RuntimeError(f"unexpected keys in checkpoint: {unexpected}")
    log.info("not in checkpoint (left initialised): %s", missing)
    ```
    """

    code = "TL204"
    name = "unchecked-strict-false"
    severity = "warning"
    fix_safety = "safe"

    def check(self, analysis: "Analysis") -> Iterator[Finding]:
        for call in analysis.iter_calls("load_state_dict"):
            if receiver(call) is None or has_star_args(call):
                continue
            strict = argument(call, 1, "strict")
            if not (isinstance(strict, ast.Constant) and strict.value is False):
                continue
            if not isinstance(analysis.parents.get(call), ast.Expr) or checks_keys_itself(analysis, call):
                continue
            yield self.finding(
                call,
                f"`{source_of(analysis, call)}` throws away its result: with `strict=False` the returned "
                "`missing_keys` and `unexpected_keys` are the only sign that the checkpoint did not fit, so "
                "mismatched layers silently keep their random weights. Bind the result and check or log both lists.",
                "Bind the result and warn about missing and unexpected keys",
            )


def checks_keys_itself(analysis: "Analysis", call: ast.Call) -> bool:
    """The author already accounts for mismatched keys: the function computes its own
    `missing_keys`/`unexpected_keys` (before loading checkpoint shards one by one, say), or
    a comment on or just above the call explains the non-strict load."""
    assigned = analysis.roles_for(call).assignments
    if any("missing" in name.lower() or "unexpected" in name.lower() for name in assigned):
        return True
    statement = analysis.statement_of(call)
    comment = trailing_comment(analysis, statement) if statement is not None else None
    if comment and "strict" in comment.lower():
        return True
    for line in range(call.lineno - 1, max(call.lineno - 4, 0), -1):
        text = analysis.lines.line_text(line).strip()
        if not text.startswith("#"):
            break
        if "strict" in text.lower():
            return True
    return False


# ==================================================================== TL205
@register
class TensorFromTensor(Rule):
    """## What it does
    Flags `torch.tensor(x)` where `x` is known to be a tensor already: the result of
    a torch function (`torch.cat`, `torch.randn`, ...), a model call, or a tensor
    method such as `.detach()`, directly or through a local variable.

    ## Why is this bad
    `torch.tensor` always copies its data and, given a tensor, warns
    (`UserWarning: To copy construct from a tensor, it is recommended to use
    sourceTensor.clone().detach()`). It also detaches silently, which is rarely
    what the surrounding code expects to read.

    ## Example
    ```python
    proj = torch.randn(dim_in, dim_out)
    weight = torch.tensor(proj)
    ```

    ## Use instead
    ```python
    proj = torch.randn(dim_in, dim_out)
    weight = proj.clone().detach()  # or proj.to(dtype) to change only the dtype
    ```
    """

    code = "TL205"
    name = "tensor-from-tensor"
    severity = "warning"
    fix_safety = "safe"

    def check(self, analysis: "Analysis") -> Iterator[Finding]:
        for call in analysis.calls_to("torch.tensor"):
            if has_star_args(call) or len(call.args) != 1:
                continue
            data = call.args[0]
            evidence = tensor_evidence(analysis, data)
            if evidence is None:
                continue
            name = source_of(analysis, data, 40)
            if not isinstance(data, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)):
                name = f"({name})"  # `(a / b).clone()`, not `a / b.clone()`
            if evidence is data:
                already = f"`{name}` already returns a tensor"
            else:
                already = f"`{name}` already is one (`{source_of(analysis, evidence, 40)}` on line {evidence.lineno})"
            copy = copy_expression(analysis, name, call)
            yield self.finding(
                call,
                f"`{source_of(analysis, call)}` copies a tensor: {already}, so this makes an extra copy and "
                f"PyTorch warns about it. Use `{copy}` (or just `.to(...)` when no copy is needed).",
                f"Replace with `{copy}`",
            )


def copy_expression(analysis: "Analysis", name: str, call: ast.Call) -> str:
    """`x.clone().detach()`, carrying `dtype=`/`device=` over as `.to(...)` and
    `requires_grad=True` as `.requires_grad_()`."""
    copy = f"{name}.clone()" if ".detach()" in name else f"{name}.clone().detach()"
    moves = [f"{kw.arg}={source_of(analysis, kw.value, 30)}" for kw in call.keywords if kw.arg in ("dtype", "device")]
    if moves:
        copy += f".to({', '.join(moves)})"
    requires_grad = keyword_value(call, "requires_grad")
    if isinstance(requires_grad, ast.Constant) and requires_grad.value is True:
        copy += ".requires_grad_()"
    return copy


def keyword_value(call: ast.Call, name: str) -> ast.AST | None:
    return next((kw.value for kw in call.keywords if kw.arg == name), None)


def tensor_evidence(analysis: "Analysis", expr: ast.AST, depth: int = 0) -> ast.AST | None:
    """The expression that shows `expr` is a tensor (a torch call, a model call), or None."""
    if depth > MAX_DEPTH:
        return None
    if isinstance(expr, ast.Name):
        value, via = followed(analysis, expr)
        return tensor_evidence(analysis, value, depth + 1) if via is not None else None
    if isinstance(expr, ast.Subscript):
        return tensor_evidence(analysis, expr.value, depth + 1)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.MatMult)):
        return tensor_evidence(analysis, expr.left, depth + 1)
    if not isinstance(expr, ast.Call):
        return None
    qualname = analysis.call_qualname(expr) or ""
    module, _, function = qualname.rpartition(".")
    if (module == "torch" and function in TENSOR_FUNCTIONS) or (
        module == "torch.nn.functional" and function in TENSOR_FUNCTIONAL
    ):
        return expr
    if is_model_call(analysis, expr):
        return expr
    if not qualname and isinstance(expr.func, ast.Attribute) and expr.func.attr in TENSOR_METHODS:
        return tensor_evidence(analysis, expr.func.value, depth + 1)
    return None


def is_model_call(analysis: "Analysis", call: ast.Call) -> bool:
    """A call of a name known to be a model by what built it or what is done with it; a
    parameter that is only *named* like one (`encoder`) may be a tokenizer's callable."""
    roles = analysis.roles_for(call)
    if is_self_attribute(call.func) and roles.function.class_node is not None:
        return call.func.attr in class_attribute_roles(analysis, roles.function.class_node)["model"]
    name = roles.model_name(call)
    if name is None:
        return False
    function = roles.function
    if name not in function.params:
        return True
    return any(
        isinstance(c.func, ast.Attribute) and isinstance(c.func.value, ast.Name) and c.func.value.id == name
        and c.func.attr in ("eval", "train", "parameters", "named_parameters", "to", "cuda", "zero_grad")
        for c in function.calls
    )


# ==================================================================== TL206
@register
class ActivationBeforeLoss(Rule):
    """## What it does
    Flags `F.cross_entropy` / `nn.CrossEntropyLoss` given the output of `softmax` or
    `log_softmax`, and `F.binary_cross_entropy_with_logits` / `nn.BCEWithLogitsLoss`
    given the output of `sigmoid` (directly or through a local variable).

    ## Why is this bad
    These losses take logits and apply the activation themselves. Feeding them
    probabilities applies it twice: softmax of probabilities is nearly uniform and
    sigmoid of probabilities lies in (0.5, 0.73), so the loss barely moves and training
    stalls without any error. (`log_softmax` twice gives the same value but hides that
    the input is not logits.)

    ## Example
    ```python
    probs = torch.softmax(logits, dim=-1)
    loss = F.cross_entropy(probs, labels)
    ```

    ## Use instead
    ```python
    loss = F.cross_entropy(logits, labels)
    # or, on probabilities: F.nll_loss(torch.log(probs), labels)
    ```
    """

    code = "TL206"
    name = "activation-before-loss"
    severity = "error"
    fix_safety = "safe"

    def check(self, analysis: "Analysis") -> Iterator[Finding]:
        for call in analysis.calls:
            loss = logits_loss_kind(analysis, call)
            if loss is None or has_star_args(call):
                continue
            prediction = argument(call, 0, "input")
            found = activation_output(analysis, prediction) if prediction is not None else None
            if found is None:
                continue
            kind, activation = found
            wanted = ("softmax", "log_softmax") if loss == "cross_entropy" else ("sigmoid",)
            if kind not in wanted:
                continue
            yield self.finding(call, self._message(analysis, call, prediction, kind, activation),
                               self._fix_title(analysis, activation))

    @staticmethod
    def _message(analysis: "Analysis", call: ast.Call, prediction: ast.AST, kind: str, activation: ast.Call) -> str:
        loss = f"`{source_of(analysis, call)}`"
        given = f"`{source_of(analysis, activation)}`"
        if prediction is not activation:
            given = f"`{source_of(analysis, prediction, 30)}` (= {given}, line {activation.lineno})"
        logits = _activation_input(analysis, activation)
        fix = f"Pass the logits (`{source_of(analysis, logits, 30)}`)" if logits is not None else "Pass the logits"
        if kind == "sigmoid":
            return (
                f"{loss} is given {given}, but a with-logits loss applies the sigmoid itself: "
                "sigmoid of probabilities lies in (0.5, 0.73), so the loss barely moves and training stalls. "
                f"{fix}, or use `binary_cross_entropy` on probabilities."
            )
        if kind == "softmax":
            return (
                f"{loss} is given {given}, but cross entropy applies `log_softmax` itself: softmax of probabilities "
                f"is nearly uniform, so gradients shrink and training stalls. {fix}."
            )
        return (
            f"{loss} is given {given}, but cross entropy applies `log_softmax` itself, so it runs twice: the value "
            f"is the same, but the code reads as if the input were logits and pays for an extra pass. {fix}, "
            "or use `F.nll_loss` on log-probabilities."
        )

    @staticmethod
    def _fix_title(analysis: "Analysis", activation: ast.Call) -> str:
        logits = _activation_input(analysis, activation)
        if logits is None:
            return "Pass the logits"
        return f"Pass the logits `{source_of(analysis, logits, 30)}`"


def logits_loss_kind(analysis: "Analysis", call: ast.Call) -> str | None:
    """"cross_entropy" or "bce_with_logits" when `call` computes one of the logits losses."""
    qualname = analysis.call_qualname(call)
    if qualname in CROSS_ENTROPY_FUNCTIONS:
        return CROSS_ENTROPY_FUNCTIONS[qualname]
    if qualname in LOGITS_LOSS_FUNCTIONS:
        return LOGITS_LOSS_FUNCTIONS[qualname]
    if qualname is not None:
        return None
    constructor = module_constructor(analysis, call.func)
    return LOSS_MODULES.get(torch_module_class(analysis, constructor) or "")


def activation_output(analysis: "Analysis", expr: ast.AST, depth: int = 0) -> tuple[str, ast.Call] | None:
    """("softmax" | "log_softmax" | "sigmoid", the activation call) when `expr` is its output."""
    if depth > MAX_DEPTH:
        return None
    if isinstance(expr, ast.Name):
        value, via = followed(analysis, expr)
        return activation_output(analysis, value, depth + 1) if via is not None else None
    if isinstance(expr, ast.Subscript):
        return activation_output(analysis, expr.value, depth + 1)
    if not isinstance(expr, ast.Call) or has_star_args(expr):
        return None
    kind = activation_kind(analysis, expr)
    if kind is not None:
        return kind, expr
    if analysis.call_qualname(expr) is None and isinstance(expr.func, ast.Attribute):
        if expr.func.attr in VALUE_KEEPING_METHODS:
            return activation_output(analysis, expr.func.value, depth + 1)
    return None


def activation_kind(analysis: "Analysis", call: ast.Call) -> str | None:
    """"softmax", "log_softmax", "softmin" or "sigmoid" when `call` applies that activation."""
    qualname = analysis.call_qualname(call)
    if qualname in FUNCTIONAL_SOFTMAX or qualname in TORCH_SOFTMAX:
        return (FUNCTIONAL_SOFTMAX | TORCH_SOFTMAX)[qualname]
    if qualname in SIGMOID_FUNCTIONS:
        return "sigmoid"
    if qualname is not None:
        return None
    if _is_activation_method(call):
        return call.func.attr
    constructor = module_constructor(analysis, call.func)
    module_class = torch_module_class(analysis, constructor)
    if module_class == "Sigmoid":
        return "sigmoid"
    return SOFTMAX_MODULES.get(module_class or "")


def _is_activation_method(call: ast.Call) -> bool:
    """`logits.softmax(-1)`, `x.sigmoid()` — not `self.softmax(x)`, which runs a module."""
    func = call.func
    return (
        isinstance(func, ast.Attribute) and func.attr in ("softmax", "log_softmax", "sigmoid")
        and not (isinstance(func.value, ast.Name) and func.value.id == "self")
    )


def _activation_input(analysis: "Analysis", activation: ast.Call) -> ast.AST | None:
    """The logits an activation was applied to."""
    if analysis.call_qualname(activation) is None and _is_activation_method(activation):
        return activation.func.value
    return argument(activation, 0, "input")

"""TL601 graph-break: flags code that makes Dynamo break the graph inside compiled code.

What breaks was measured on torch 2.13 (CPU, `torch._dynamo.explain`, each construct between
two tensor ops), and the rule reports only that:

- `.item()`, and `float()` / `int()` / `bool()` of a tensor: a break unless
  `capture_scalar_outputs` is on; `fullgraph=True` captures them too (no break, no error).
- `.tolist()`: a break, and an error under `fullgraph=True`, for float and bool tensors in every
  configuration; an integer tensor's is captured like `.item()` (`capture_scalar_outputs`,
  `fullgraph=True`), so there the rule reports it only on a tensor known to be float or bool.
- `print(...)`: a break (an error under `fullgraph=True`) unless print is made a
  `reorderable_logging_functions` entry.
- `if` / `while` / `x if c else y` / `not` on a tensor value: a break, an error under
  `fullgraph=True`, whatever the configuration; `assert` on a tensor is traced (no break).
- `nonzero`, `argwhere`, `masked_select`, `unique`, one-argument `torch.where` and reading
  with a boolean mask (`x[x > 0]`): a break ("dynamic shape operator") unless
  `capture_dynamic_output_shape_ops` is on; `fullgraph=True` captures them; writing through a
  mask (`x[m] = 0`) is traced.
- `math.*` on a tensor: a break (the tensor becomes a Python float).
- Not reported, because Dynamo traces them: `.numpy()` and numpy functions on tensors
  (through `torch._numpy`), `math.*` on sizes, `if` on shapes, dtypes, `None` or config values.
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator

from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import Finding, Related, Rule
from torch_lsp.diagnostics.compile.compiled_code import CompiledFunction, compiled_functions, traced_nodes
from torch_lsp.diagnostics.compile.tensor_values import compares_values, is_tensor
from torch_lsp.shapes import infer_shapes
from torch_lsp.shapes.values import Tensor
from torch_lsp.roles import reaching_assignment
from torch_lsp.syntax_nodes import call_name

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.shapes.report import ShapeReport

# Ops whose output size depends on the data (Dynamo's "dynamic shape operator").
DATA_DEPENDENT_SHAPE_OPS = {"nonzero", "argwhere", "masked_select", "unique", "unique_consecutive"}
# Ops that return a boolean tensor of the same shape (what a mask is made of).
MASK_FUNCTIONS = {
    "isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal", "logical_and", "logical_or", "logical_not",
    "logical_xor", "eq", "ne", "gt", "ge", "lt", "le", "greater", "greater_equal", "less", "less_equal",
    "not_equal", "bool",
}
TO_PYTHON_SCALAR = {"float", "int", "bool"}
_CAPTURE_SCALARS = "capture_scalar_outputs"
_CAPTURE_SHAPES = "capture_dynamic_output_shape_ops"
_MOVE_OUT = "or move it out of the compiled code"
_MAX_MASK_DEPTH = 8
_REORDERABLE_PRINT = "reorderable_logging_functions.add(print)"


@register
class GraphBreak(Rule):
    """## What it does
    Flags code that breaks the graph inside a function compiled with `torch.compile`
    (decorated, or `f = torch.compile(f)`) or inside the `forward` of a module of this file
    passed to `torch.compile` (and the methods it calls on `self`): `.item()` and
    `float()`/`int()` of a tensor, `.tolist()`, `print(...)`, `if`/`while` on a tensor value,
    ops with data-dependent output shapes (`nonzero`, boolean-mask indexing) and `math`
    functions on tensors. Measured on torch 2.13; `.numpy()` and numpy calls on tensors are
    traced there and are not reported.

    ## Why is this bad
    Dynamo cannot put these in the graph: it stops, runs the code in Python, and starts a new
    graph after it. Every break costs a round trip through Python, blocks fusions across it and
    often a device sync; with `fullgraph=True` most of them are errors instead.

    ## Example
    ```python
    @torch.compile
    def step(x):
        if x.sum() > 0:
            x = x * 2
        return x[x > 0].mean().item()
    ```

    ## Use instead
    ```python
    @torch.compile
    def step(x):
        x = torch.where(x.sum() > 0, x * 2, x)
        return x.clamp(min=0).sum() / (x > 0).sum()  # keep values in tensors
    ```
    or `torch.cond(pred, true_fn, false_fn, (x,))` for a branch, and
    `torch._dynamo.config.capture_scalar_outputs = True` /
    `capture_dynamic_output_shape_ops = True` to capture `.item()` and data-dependent shapes.

    ## Fix safety
    No automatic fix: the remedy changes how the code is written.
    """

    code = "TL601"
    name = "graph-break"
    severity = "information"
    fix_safety = "none"
    needs_shapes = True
    whole_file = True  # what `torch.compile` wraps, and the dynamo options, set anywhere in the file

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        compiled = compiled_functions(analysis)
        if not compiled:
            return
        report = infer_shapes(analysis)
        captured = _captured_by_config(analysis)
        for function in compiled:
            for node, message in _breaks(analysis, report, function, captured):
                finding = self.finding(node, message)
                finding.related.append(Related.at(function.compile_site, "compiled here"))
                yield finding


def _breaks(analysis: Analysis, report: "ShapeReport", function: CompiledFunction,
            captured: set[str]) -> Iterator[tuple[ast.AST, str]]:
    where = f"in compiled {function.label}"
    scalars_captured = function.fullgraph or _CAPTURE_SCALARS in captured
    shapes_captured = function.fullgraph or _CAPTURE_SHAPES in captured
    for node in traced_nodes(function.node, analysis):
        if isinstance(node, ast.Call):
            found = _call_break(analysis, report, node, where, scalars_captured, shapes_captured, captured)
            if found:
                yield node, found
        elif isinstance(node, (ast.If, ast.While, ast.IfExp)) and is_tensor(analysis, report, node.test):
            yield node.test, _branch_message(node, where)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and not shapes_captured \
                and _indexes_with_mask(analysis, report, node):
            yield node, (f"Boolean-mask indexing {where} has a data-dependent output shape: a graph break. "
                         f"Keep the shape with `torch.where(mask, x, 0)` or `x.masked_fill(~mask, 0)`, or set "
                         f"`torch._dynamo.config.{_CAPTURE_SHAPES} = True`.")


def _call_break(analysis: Analysis, report: "ShapeReport", call: ast.Call, where: str,
                scalars_captured: bool, shapes_captured: bool, captured: set[str]) -> str | None:
    name = call_name(call)
    method = isinstance(call.func, ast.Attribute)
    qualname = analysis.call_qualname(call)
    if method and name == "item" and not call.args and not scalars_captured and qualname is None:
        return (f"`.item()` {where} copies the value to Python: a graph break. Keep it a tensor, set "
                f"`torch._dynamo.config.{_CAPTURE_SCALARS} = True`, {_MOVE_OUT}.")
    if method and name == "tolist" and not call.args and qualname is None \
            and not (scalars_captured and not _surely_not_integer(analysis, report, call.func.value)):
        return (f"`.tolist()` {where} turns the tensor into a Python list: a graph break. Keep the values "
                f"in a tensor, {_MOVE_OUT}.")
    if isinstance(call.func, ast.Name) and name in TO_PYTHON_SCALAR and _builtin(analysis, name) \
            and len(call.args) == 1 and not scalars_captured and is_tensor(analysis, report, call.args[0]):
        return (f"`{name}(...)` of a tensor {where} is `.item()`: a graph break. Keep it a tensor, set "
                f"`torch._dynamo.config.{_CAPTURE_SCALARS} = True`, {_MOVE_OUT}.")
    if isinstance(call.func, ast.Name) and name == "print" and _builtin(analysis, name) \
            and _REORDERABLE_PRINT not in captured:
        return (f"`print(...)` {where} cannot be traced: a graph break (an error under `fullgraph=True`). "
                f"Remove it, {_MOVE_OUT}, or allow it with "
                f"`torch._dynamo.config.reorderable_logging_functions.add(print)`.")
    if not shapes_captured and _data_dependent_shape(analysis, report, call, name, qualname):
        return (f"`{name}` {where} has a data-dependent output shape: a graph break. Keep the shape with "
                f"`torch.where(mask, x, 0)` or `masked_fill`, or set "
                f"`torch._dynamo.config.{_CAPTURE_SHAPES} = True`.")
    if qualname and qualname.startswith("math.") and any(is_tensor(analysis, report, a) for a in call.args):
        return (f"`{qualname}` on a tensor {where} converts it to a Python float: a graph break. "
                f"Use `torch.{qualname[5:]}` (or the tensor method) instead.")
    return None


def _surely_not_integer(analysis: Analysis, report: "ShapeReport", node: ast.AST) -> bool:
    """A float or bool tensor (a mask among them): its `.tolist()` breaks even where scalars are
    captured (an integer tensor's is then captured, as `.item()` is)."""
    value = report.value_of(node)
    if isinstance(value, Tensor) and not value.claimed and value.dtype in ("float", "bool"):
        return True
    return _is_mask(analysis, report, node)


def _branch_message(node: ast.AST, where: str) -> str:
    if isinstance(node, ast.While):
        return (f"`while` on a tensor value {where} reads the value in Python: a graph break (an error under "
                f"`fullgraph=True`). Compute the loop count outside the compiled code, or keep the loop "
                f"out of it.")
    what = "`if`" if isinstance(node, ast.If) else "A conditional expression"
    return (f"{what} on a tensor value {where} reads the value in Python: a graph break (an error under "
            f"`fullgraph=True`). Select with `torch.where(cond, a, b)`, or branch with "
            f"`torch.cond(pred, true_fn, false_fn, operands)`.")


def _data_dependent_shape(analysis: Analysis, report: "ShapeReport", call: ast.Call, name: str | None,
                          qualname: str | None) -> bool:
    if name not in DATA_DEPENDENT_SHAPE_OPS and name != "where":
        return False
    if qualname is not None:
        if not qualname.startswith("torch."):
            return False
        if name == "where":  # only the one-argument form, which is `torch.nonzero(cond, as_tuple=True)`
            return len(call.args) == 1 and not call.keywords
        return True
    # A method: on a tensor only (`np.unique`, a pandas `unique()` are not ours to judge).
    return name != "where" and isinstance(call.func, ast.Attribute) and is_tensor(analysis, report, call.func.value)


def _indexes_with_mask(analysis: Analysis, report: "ShapeReport", node: ast.Subscript) -> bool:
    items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    return any(_is_mask(analysis, report, item) for item in items)


def _is_mask(analysis: Analysis, report: "ShapeReport", node: ast.AST, depth: int = 0) -> bool:
    """A boolean tensor of the data's own shape: a comparison of a tensor, `~`/`&`/`|` of masks,
    `torch.isnan(x)`, a name bound to one, or a name the shape pass knows as a bool tensor."""
    if depth > _MAX_MASK_DEPTH:
        return False
    if isinstance(node, ast.Name):
        assignment = reaching_assignment(analysis, node)
        if assignment is not None and _is_mask(analysis, report, assignment.value, depth + 1):
            return True
    if isinstance(node, ast.Compare):
        return compares_values(node) and is_tensor(analysis, report, node)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert):
        return _is_mask(analysis, report, node.operand, depth + 1)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
        return _is_mask(analysis, report, node.left, depth + 1) or _is_mask(analysis, report, node.right, depth + 1)
    if isinstance(node, ast.Call) and call_name(node) in MASK_FUNCTIONS:
        return is_tensor(analysis, report, node)
    value = report.value_of(node)
    return isinstance(value, Tensor) and value.dtype == "bool" and not value.claimed


def _builtin(analysis: Analysis, name: str) -> bool:
    """`name` is the builtin: not imported, not defined in this file."""
    return name not in analysis.imports and not analysis.function_named(name)


def _captured_by_config(analysis: Analysis) -> set[str]:
    """Dynamo capture settings this file turns on (`torch._dynamo.config.X = True`, and
    `...config.reorderable_logging_functions.add(print)`, which lets print run after the graph)."""
    found = set()
    for call in analysis.calls:
        func = call.func
        if call_name(call) == "add" and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Attribute) \
                and func.value.attr == "reorderable_logging_functions" \
                and any(isinstance(a, ast.Name) and a.id == "print" for a in call.args):
            found.add(_REORDERABLE_PRINT)
    for stmt in analysis.statements:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant) and stmt.value.value is True:
            for target in stmt.targets:
                if isinstance(target, ast.Attribute) and target.attr in (_CAPTURE_SCALARS, _CAPTURE_SHAPES):
                    found.add(target.attr)
    return found

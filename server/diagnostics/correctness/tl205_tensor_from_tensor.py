"""TL205 tensor-from-tensor: flags `torch.tensor(x)` where `x` is known to be a tensor already: the
result of a torch function (`torch.cat`, `torch.randn`, ...), a model call, a parameter annotated
`torch.Tensor`, or a tensor method such as `.detach()`, directly or through a local variable.
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator

from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import Finding, Rule
from torch_lsp.diagnostics.correctness.provenance import MAX_DEPTH, followed
from torch_lsp.diagnostics.correctness.quoting import source_of
from torch_lsp.roles import class_attribute_roles, self_attribute_values
from torch_lsp.syntax_nodes import has_star_args, is_self_attribute

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis


# torch functions that return one tensor.
TENSOR_FUNCTIONS = {
    "cat", "concat", "concatenate", "stack", "hstack", "vstack", "zeros", "ones", "empty", "full", "rand", "randn",
    "randint", "randperm", "arange", "linspace", "logspace", "eye", "zeros_like", "ones_like", "empty_like",
    "full_like", "rand_like", "randn_like", "tensor", "as_tensor", "from_numpy", "matmul", "mm", "bmm", "einsum",
    "exp", "log", "sigmoid", "tanh", "softmax", "log_softmax", "cumsum", "flatten", "reshape", "cdist", "outer",
    "clamp", "abs", "sqrt", "mean", "sum", "diag", "tril", "triu", "cross", "normal", "cov", "corrcoef",
    # random draws and index results: always one tensor (not `max`/`sort`/`topk`/`where(cond)`, which give tuples)
    "multinomial", "bernoulli", "poisson", "argmax", "argmin", "argsort", "gather", "index_select", "masked_select",
    "bincount", "cumprod", "sign", "round", "floor", "ceil", "square", "pow", "maximum", "minimum", "log1p", "expm1",
    "logsumexp",
}
TENSOR_FUNCTIONAL = {
    "normalize", "softmax", "log_softmax", "relu", "gelu", "silu", "linear", "one_hot", "pad", "interpolate",
    "embedding", "sigmoid", "dropout", "conv1d", "conv2d", "conv3d",
}
# Tensor methods whose result is again a tensor.
TENSOR_METHODS = {
    "detach", "clone", "float", "double", "half", "bfloat16", "long", "int", "bool", "to", "cpu", "cuda",
    "contiguous", "view", "reshape", "squeeze", "unsqueeze", "flatten", "t", "permute", "transpose", "mean", "sum",
    "abs", "exp", "log", "sigmoid", "softmax", "log_softmax", "type_as", "expand", "repeat", "norm", "argmax", "argmin",
    "multinomial", "round", "sign", "clamp", "pow", "sqrt", "gather", "masked_fill", "flip", "roll", "cumsum",
}


@register
class TensorFromTensor(Rule):
    """## What it does
    Flags `torch.tensor(x)` where `x` is known to be a tensor already: the result of
    a torch function (`torch.cat`, `torch.randn`, ...), a model call, a parameter
    annotated `torch.Tensor`, or a tensor method such as `.detach()`, directly or
    through a local variable.

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
        return tensor_evidence(analysis, value, depth + 1) if via is not None else tensor_parameter(analysis, expr)
    if isinstance(expr, ast.Subscript):
        return tensor_evidence(analysis, expr.value, depth + 1)
    if is_self_attribute(expr):
        return _attribute_tensor_evidence(analysis, expr, depth)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.MatMult)):
        # `a / b` is a tensor when either side is (`correct / total`, `n / x.sum()`)
        return tensor_evidence(analysis, expr.left, depth + 1) or tensor_evidence(analysis, expr.right, depth + 1)
    if isinstance(expr, ast.Compare) and len(expr.ops) == 1 and isinstance(expr.ops[0], (ast.Eq, ast.NotEq, ast.Lt, ast.Gt, ast.LtE, ast.GtE)):
        # `(pred == y)` of a tensor is a tensor, and so is `(pred == y).sum()`
        return tensor_evidence(analysis, expr.left, depth + 1) or tensor_evidence(analysis, expr.comparators[0], depth + 1)
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        return tensor_evidence(analysis, expr.operand, depth + 1)
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


def _attribute_tensor_evidence(analysis: "Analysis", attribute: ast.Attribute, depth: int) -> ast.AST | None:
    """`self.features` where every `self.features = ...` of the class is a tensor
    (`torch.from_numpy(...)` in `__init__`): the evidence of the first."""
    cls = analysis.roles_for(attribute).function.class_node
    values = self_attribute_values(analysis, cls).get(attribute.attr) if cls is not None else None
    if not values or any(value is None for value in values):
        return None
    found = [tensor_evidence(analysis, value, depth + 1) for value in values]
    return found[0] if all(found) else None


def tensor_parameter(analysis: "Analysis", name: ast.Name) -> ast.arg | None:
    """The parameter `name` is, when annotated `torch.Tensor` and never rebound in the function
    but by the statement that reads it (`target = torch.tensor(target, dtype=...)` reads the
    parameter before it binds the copy)."""
    roles = analysis.roles_for(name)
    function = roles.function
    reading = analysis.statement_of(name)
    if function.is_module or name.id not in function.params or any(
            assignment.statement is not reading for assignment in roles.assignments.get(name.id, ())):
        return None
    arguments = function.node.args
    for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
        if arg.arg == name.id and arg.annotation is not None:
            return arg if analysis.qualname(arg.annotation) == "torch.Tensor" else None
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

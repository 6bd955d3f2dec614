"""TL104 inplace-on-leaf: flags an in-place change (`+=`, `x[...] = ...`, any `*_` method such as
`clamp_`) of a tensor that requires grad — a tensor made with `requires_grad=True` or
`.requires_grad_()`, an `nn.Parameter`, or a model's parameter — outside `torch.no_grad()`.
"""
from __future__ import annotations

import ast
from typing import Iterator

from torch_lsp.analysis import Analysis, FunctionInfo
from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import Finding, Rule
from torch_lsp.roles import class_attribute_roles, local_module_classes
from torch_lsp.syntax_nodes import call_name, dotted, keyword


@register
class InplaceOnLeaf(Rule):
    """
    ## What it does
    Flags an in-place change (`+=`, `x[...] = ...`, any `*_` method such as `clamp_`) of a
    tensor that requires grad — a tensor made with `requires_grad=True` or
    `.requires_grad_()`, an `nn.Parameter`, or a model's parameter — outside
    `torch.no_grad()`.

    ## Why is this bad
    Autograd refuses: "a leaf Variable that requires grad is being used in an in-place
    operation". Manual parameter updates and clamps must not be recorded in the graph.

    ## Example
    ```python
    w = torch.zeros(d, requires_grad=True)
    ...
    w -= lr * w.grad
    ```

    ## Use instead
    ```python
    with torch.no_grad():
        w -= lr * w.grad
    ```
    """

    code = "TL104"
    name = "inplace-on-leaf"
    severity = "error"
    fix_safety = "safe"

    _NOT_MUTATIONS = {"requires_grad_", "retain_grad", "share_memory_", "register_hook"}
    # Weight surgery (`layer.weight.copy_(w)`) lives in conversion helpers that callers run
    # under `no_grad` in another file; only arithmetic updates of model parameters are sure.
    _INIT_STYLE = {"copy_", "fill_", "zero_", "uniform_", "normal_", "data_", "set_", "resize_"}

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        for function in analysis.functions:
            if function.no_grad_decorated or analysis.only_called_without_grad(function):
                continue
            for stmt in function.statements:
                if analysis.context(stmt).grad_disabled:
                    continue
                yield from self._statement(analysis, function, stmt)

    def _statement(self, analysis: Analysis, function: FunctionInfo, stmt: ast.stmt) -> Iterator[Finding]:
        targets: list[tuple[ast.AST, ast.AST]] = []  # (mutated tensor expr, reported node)
        if isinstance(stmt, ast.AugAssign):
            base = stmt.target.value if isinstance(stmt.target, ast.Subscript) else stmt.target
            targets.append((base, stmt))
        elif isinstance(stmt, ast.Assign):
            targets += [(t.value, stmt) for t in stmt.targets if isinstance(t, ast.Subscript)]
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            call = stmt.value
            name = call_name(call)
            if name and name.endswith("_") and not name.endswith("__") and name not in self._NOT_MUTATIONS:
                if isinstance(call.func, ast.Attribute):
                    targets.append((call.func.value, call))
        for tensor, node in targets:
            why = self._requires_grad(analysis, function, tensor, stmt)
            if why == "is a model parameter" and isinstance(node, ast.Call) and call_name(node) in self._INIT_STYLE:
                continue
            if why:
                text = ast.unparse(tensor)
                message = (
                    f"`{text}` {why}, and this changes it in place outside `torch.no_grad()`: autograd raises "
                    f"\"a leaf Variable that requires grad is being used in an in-place operation\". "
                    f"Wrap the update in `with torch.no_grad():`."
                )
                yield self.finding(node, message, "Wrap the statement in `with torch.no_grad():`")

    def _requires_grad(self, analysis: Analysis, function: FunctionInfo, tensor: ast.AST, stmt: ast.stmt) -> str | None:
        roles = analysis.roles_for(function)
        if isinstance(tensor, ast.Name):
            assignment = roles.last_assignment(tensor.id, stmt)
            if assignment is not None and not assignment.unpacked and _makes_leaf(analysis, assignment.value):
                return "requires grad"
            return None
        if isinstance(tensor, ast.Attribute):
            chain = dotted(tensor)
            if chain is None:
                return None
            root, *rest = chain.split(".")
            if root == "self" and len(rest) == 1 and function.class_node is not None:
                if rest[0] in class_attribute_roles(analysis, function.class_node)["parameter"]:
                    return "is an `nn.Parameter`"
                return None
            if rest and rest[-1] in ("weight", "bias") and "data" not in rest and "grad" not in rest:
                if root == "self" and function.class_node is not None and function.class_node.name in local_module_classes(analysis):
                    if len(rest) >= 2 and rest[0] in class_attribute_roles(analysis, function.class_node)["model"]:
                        return "is a model parameter"
                elif root != "self" and roles.is_model(root):
                    return "is a model parameter"
        return None


def _makes_leaf(analysis: Analysis, value: ast.AST | None) -> bool:
    if not isinstance(value, ast.Call):
        return False
    if analysis.call_qualname(value) in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
        return True
    if call_name(value) == "requires_grad_":
        args = value.args or [kw.value for kw in value.keywords]
        return not args or (isinstance(args[0], ast.Constant) and args[0].value is True)
    kw = keyword(value, "requires_grad")
    qualname = analysis.call_qualname(value) or ""
    return (
        kw is not None and isinstance(kw.value, ast.Constant) and kw.value.value is True and qualname.startswith("torch.")
    )

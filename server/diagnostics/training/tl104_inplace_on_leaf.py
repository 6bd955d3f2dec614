"""TL104 inplace-on-leaf: flags an in-place change (`+=`, `x[...] = ...`, any `*_` method such as
`clamp_`) of a tensor that requires grad — a tensor made with `requires_grad=True` or
`.requires_grad_()`, an `nn.Parameter`, or a model's parameter — outside `torch.no_grad()`.
"""
from __future__ import annotations

import ast
from typing import Iterator

from torch_lsp.analysis import Analysis, FunctionInfo, holds_plain_class_instance
from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import Finding, Rule
from torch_lsp.fact_cache import FactKey
from torch_lsp.roles import class_attribute_roles, local_module_classes, makes_grad_leaf
from torch_lsp.syntax_nodes import call_name, dotted, iterated_source, walk_nodes


@register
class InplaceOnLeaf(Rule):
    """
    ## What it does
    Flags an in-place change (`+=`, `x[...] = ...`, any `*_` method such as `clamp_`) of a
    tensor that requires grad — a tensor made with `requires_grad=True` or
    `.requires_grad_()`, an `nn.Parameter`, or a model's parameter — outside
    `torch.no_grad()`. Parameters are also seen when reached indirectly: a loop variable over
    `m.parameters()` / `zip(a.parameters(), b.parameters())` / `named_parameters()` (unless
    the file turns `requires_grad` off somewhere, as EMA copies do), a weight behind a
    submodule index (`model.classifier[2].bias[:] = 0.0`), a module-level leaf tensor
    updated inside a function (`global W` ... `W -= lr * W.grad`), and an `nn.Parameter` of
    a module class of the file reached through an instance built in the function or a
    parameter annotated with the class (`loss_mod: ContrastiveLoss` ...
    `loss_mod.temperature.clamp_(0.01, 1.0)`). Not flagged: `model.bias += lr * grad_b` on a
    from-scratch model, an instance of a plain class of the file (no `nn.Module` base) that
    the name is bound to, or that every call of the function passes in (`model =
    Adaline(2)`, then `train(model, x, y)`): its `bias` is a plain tensor, no parameter.

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

    _NOT_MUTATIONS = {"requires_grad_", "retain_grad", "share_memory_", "register_hook", "detach_"}
    # Weight surgery (`layer.weight.copy_(w)`) lives in conversion helpers that callers run
    # under `no_grad` in another file; only arithmetic updates of model parameters are sure.
    _INIT_STYLE = {"copy_", "fill_", "zero_", "uniform_", "normal_", "data_", "set_", "resize_"}

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        for function in analysis.functions:
            if function.no_grad_decorated or analysis.only_called_without_grad(function):
                continue
            for stmt in function.statements:
                if not _may_mutate(stmt) or analysis.context(stmt).grad_disabled:
                    continue
                yield from self._statement(analysis, function, stmt)

    def _statement(self, analysis: Analysis, function: FunctionInfo, stmt: ast.stmt) -> Iterator[Finding]:
        """The findings of one statement `_may_mutate` lets through."""
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
                    tensor = call.func.value
                    while _is_inplace_call(tensor):  # `p.mul_(d).add_(q)`: the chain mutates `p`
                        tensor = tensor.func.value
                    targets.append((tensor, call))
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
            if assignment is not None and not assignment.unpacked and makes_grad_leaf(analysis, assignment.value):
                return "requires grad"
            if assignment is None and _module_level_leaf(analysis, function, tensor.id):
                return "requires grad"  # `global W` ... `W -= lr * W.grad`
            if _iterates_parameters(analysis, function, tensor.id, stmt) and not _freezes_parameters(analysis) \
                    and not _detached_in_place(analysis, function, tensor.id, stmt):
                return "is a model parameter"
            return None
        if isinstance(tensor, ast.Subscript) or (isinstance(tensor, ast.Attribute) and _has_subscript(tensor)):
            # `model.classifier[2].bias[:] = 0.0`: a parameter reached through a submodule index
            base = tensor.value if isinstance(tensor, ast.Subscript) else tensor
            if isinstance(base, ast.Attribute) and base.attr in ("weight", "bias"):
                root = base
                while isinstance(root, (ast.Attribute, ast.Subscript)):
                    if isinstance(root, ast.Attribute) and root.attr in ("data", "grad") and root is not base:
                        return None
                    root = root.value
                if isinstance(root, ast.Name) and root.id != "self" and roles.is_model(root.id) \
                        and not holds_plain_class_instance(analysis, function, root.id, stmt):
                    return "is a model parameter"
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
            if len(rest) == 1:
                cls = _module_instance_class(analysis, function, root, stmt)
                if cls is not None and rest[0] in class_attribute_roles(analysis, cls)["parameter"]:
                    return "is an `nn.Parameter`"  # `loss_mod.temperature.clamp_(...)` outside the class
            if rest and rest[-1] in ("weight", "bias") and "data" not in rest and "grad" not in rest:
                if root == "self" and function.class_node is not None and function.class_node.name in local_module_classes(analysis):
                    if len(rest) >= 2 and rest[0] in class_attribute_roles(analysis, function.class_node)["model"]:
                        return "is a model parameter"
                elif root != "self" and roles.is_model(root) \
                        and not holds_plain_class_instance(analysis, function, root, stmt):
                    return "is a model parameter"  # not a from-scratch class's plain tensor
        return None


def _module_instance_class(analysis: Analysis, function: FunctionInfo, name: str, stmt: ast.stmt) -> ast.ClassDef | None:
    """The file's `nn.Module` class that `name` is an instance of: built in the function
    (`head = ContrastiveLoss()`) or a parameter annotated with it (`loss_mod: ContrastiveLoss`)."""
    classes = local_module_classes(analysis)
    assignment = analysis.roles_for(function).last_assignment(name, stmt)
    if assignment is not None:
        value = assignment.value
        if assignment.unpacked or not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)):
            return None
        return classes.get(value.func.id)
    if function.is_module or name not in function.params:
        return None
    args = function.node.args
    for arg in args.posonlyargs + args.args + args.kwonlyargs:
        if arg.arg == name and isinstance(arg.annotation, ast.Name):
            return classes.get(arg.annotation.id)
    return None


def _is_inplace_call(node: ast.AST) -> bool:
    name = call_name(node) if isinstance(node, ast.Call) else None
    return bool(name and name.endswith("_") and not name.endswith("__") and isinstance(node.func, ast.Attribute))


def _has_subscript(node: ast.AST) -> bool:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Subscript):
            return True
        node = node.value
    return False


def _module_level_leaf(analysis: Analysis, function: FunctionInfo, name: str) -> bool:
    """`name` is not bound in the function (or is declared `global`) and the module binds it,
    last, to a tensor that requires grad."""
    if function.is_module or name in function.params:
        return False
    declared_global = any(isinstance(n, ast.Global) and name in n.names for n in walk_nodes(function.node))
    bound_here = any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
                     for n in walk_nodes(function.node))
    if bound_here and not declared_global:
        return False
    value = None
    for stmt in analysis.tree.body:
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
            value = stmt.value
    return value is not None and makes_grad_leaf(analysis, value)


def _iterates_parameters(analysis: Analysis, function: FunctionInfo, name: str, stmt: ast.stmt) -> bool:
    """`name` is bound by an enclosing `for` over `m.parameters()`, `m.named_parameters()` or a
    `zip` of them (`for p, q in zip(ema.parameters(), model.parameters())`)."""
    node = analysis.parents.get(stmt)
    while node is not None and node is not function.node:
        if isinstance(node, ast.For):
            bound = _parameter_bound(node.target, node.iter, name)
            if bound is not None:
                return bound
        node = analysis.parents.get(node)
    return False


_DETACHED_OWNERS: FactKey[frozenset] = FactKey("what `for p in X.parameters(): p.detach_()` detaches")


def _detached_in_place(analysis: Analysis, function: FunctionInfo, name: str, stmt: ast.stmt) -> bool:
    """`name` iterates the parameters of an object whose parameters the file detaches in place
    (`for param in self.ema_model.parameters(): param.detach_()`, ignite's EMA copy): on a leaf,
    `detach_()` also clears `requires_grad`, so updating them in place is no autograd error."""
    owners = analysis.file_fact(_DETACHED_OWNERS, _scan_detached_owners)  # of the whole file
    if not owners:
        return False
    node = analysis.parents.get(stmt)
    while node is not None and node is not function.node:
        if isinstance(node, ast.For):
            source = _parameter_source(node.target, node.iter, name)
            if source is not None:
                return dotted(source.func.value) in owners
        node = analysis.parents.get(node)
    return False


def _scan_detached_owners(analysis: Analysis) -> frozenset:
    owners = set()
    for call in analysis.iter_calls("detach_"):
        if call.args or not isinstance(call.func.value, ast.Name):
            continue
        loop = analysis.parents.get(analysis.statement_of(call))
        if isinstance(loop, ast.For) and isinstance(loop.target, ast.Name) \
                and loop.target.id == call.func.value.id and _yields_parameters(loop.iter):
            owner = dotted(loop.iter.func.value)
            if owner is not None:
                owners.add(owner)
    return frozenset(owners)


def _parameter_source(target: ast.AST, source: ast.AST, name: str) -> ast.Call | None:
    """The `X.parameters()` call that a loop target binds `name` from (through a `zip`)."""
    found = iterated_source(target, source, name)
    return found if found is not None and _yields_parameters(found) else None


def _parameter_bound(target: ast.AST, source: ast.AST, name: str) -> bool | None:
    """True/False when `target` binds `name` from `source` (a parameter or not); None when it does not bind it."""
    if isinstance(target, ast.Name):
        return _yields_parameters(source) if target.id == name else None
    if not isinstance(target, (ast.Tuple, ast.List)):
        return None
    if isinstance(source, ast.Call) and call_name(source) == "zip" and len(source.args) == len(target.elts):
        for element, part in zip(target.elts, source.args):
            bound = _parameter_bound(element, part, name)
            if bound is not None:
                return bound
        return None
    if isinstance(source, ast.Call) and call_name(source) == "named_parameters" and len(target.elts) == 2:
        second = target.elts[1]
        if isinstance(second, ast.Name) and second.id == name:
            return True
    if any(isinstance(n, ast.Name) and n.id == name for n in walk_nodes(target)):
        return False
    return None


def _yields_parameters(source: ast.AST) -> bool:
    return isinstance(source, ast.Call) and call_name(source) == "parameters" and not source.args


_FREEZES_PARAMETERS: FactKey[bool] = FactKey("the file turns gradients off somewhere")


def _freezes_parameters(analysis: Analysis) -> bool:
    """The file turns gradients off somewhere (`requires_grad_(False)`, `.requires_grad = False`):
    an EMA copy updated in place may be one of those, so in-place updates are not sure errors."""
    return analysis.file_fact(_FREEZES_PARAMETERS, _scan_for_frozen_parameters)


def _scan_for_frozen_parameters(analysis: Analysis) -> bool:
    for call in analysis.iter_calls("requires_grad_"):
        if call.args and isinstance(call.args[0], ast.Constant) and call.args[0].value is False:
            return True
    return any(isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant) and stmt.value.value is False
               and any(isinstance(t, ast.Attribute) and t.attr == "requires_grad" for t in stmt.targets)
               for stmt in analysis.statements)


def _may_mutate(stmt: ast.stmt) -> bool:
    """The statements `_statement` looks into (`x += ...`, `x[i] = ...`, `x.add_(...)`): the
    rest of a function's statements are passed over before any look-up."""
    if isinstance(stmt, ast.AugAssign):
        return True
    if isinstance(stmt, ast.Assign):
        return any(isinstance(target, ast.Subscript) for target in stmt.targets)
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)

"""Where a value comes from, as the TL2xx rules follow it.

A local name is followed only to the assignment that surely ran before the use
(`torch_lsp.roles.reaching_assignment`); a module call (`criterion(...)`,
`self.softmax(x)`) to the one constructor that built the module.  What cannot be followed is
unknown, and unknown is silent.
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from torch_lsp.fact_cache import FactKey
from torch_lsp.roles import reaching_assignment, self_attribute_values
from torch_lsp.syntax_nodes import has_star_args, is_self_attribute

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis


# Calls on a module that hand back the same module (`nn.CrossEntropyLoss().to(device)`).
MODULE_MOVES = {"to", "cuda", "cpu", "float", "half", "double", "train", "eval"}
# How many assignments and calls the rules follow a value through.
MAX_DEPTH = 8


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


_MODULE_CONSTRUCTORS: FactKey[dict[ast.AST, "ast.Call | None"]] = FactKey("provenance.module_constructors")


def module_constructor(analysis: "Analysis", func: ast.AST, through_callers: bool = True) -> ast.Call | None:
    """The constructor call that built the module a call runs: `nn.CrossEntropyLoss(...)`
    for `criterion(...)` (a local or module-level name, or a parameter every caller in the
    file passes the same kind of module) or `self.criterion(...)` (set in the class), or
    None when the binding is not one plain constructor."""
    if isinstance(func, ast.Call):
        return func
    if not through_callers:
        return _constructor(analysis, func, through_callers)
    # Kept per version: the TL20x rules ask it of every call they look at (TL206 and the
    # shape rule TL202 of the same calls), each answer a walk to the binding.
    found = analysis.facts.get_or_compute(_MODULE_CONSTRUCTORS, dict)
    if func not in found:
        found[func] = _constructor(analysis, func, through_callers)
    return found[func]


def _constructor(analysis: "Analysis", func: ast.AST, through_callers: bool) -> ast.Call | None:
    if isinstance(func, ast.Name):
        return _constructor_of_name(analysis, func, through_callers)
    if is_self_attribute(func):
        return _constructor_of_attribute(analysis, func)
    return None


def _constructor_of_name(analysis: "Analysis", name: ast.Name, through_callers: bool) -> ast.Call | None:
    if name.id in analysis.imports or analysis.function_named(name.id) or name.id in analysis.classes:
        return None  # an imported or locally defined function or class, not a module instance
    if name.id not in _assigned_or_parameter(analysis):
        return None  # `len(x)`, `print(...)`: nothing in the file binds it, so no constructor does
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


_ASSIGNED_OR_PARAMETER: FactKey[frozenset[str]] = FactKey("provenance.assigned_or_parameter")


def _assigned_or_parameter(analysis: "Analysis") -> frozenset[str]:
    """The names some scope of the file assigns or takes as a parameter: the only names the
    steps below can follow to a constructor (a reaching or module-level assignment, or what
    callers pass for a parameter)."""
    def collect() -> frozenset[str]:
        names: set[str] = set()
        for function, roles in analysis.roles.items():
            names.update(roles.assignments)
            names.update(function.params)
        return frozenset(names)

    return analysis.facts.get_or_compute(_ASSIGNED_OR_PARAMETER, collect)


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

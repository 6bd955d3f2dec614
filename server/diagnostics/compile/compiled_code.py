"""Which functions of a file run under `torch.compile`, and what Dynamo traces in them.

A function is compiled when it is decorated with `torch.compile` (bare or called, under any
imported name), when `f = torch.compile(f)` names it, or when it is the `forward` of a local
`nn.Module` class whose instance this file passes to `torch.compile` (`torch.compile(Net())`,
`model = Net(); torch.compile(model)`, `model.compile()`).  Dynamo inlines the methods
`forward` calls on `self` and the plain functions of this file that compiled code calls by
name, so those are compiled too, transitively.  Anything not followed
(an imported model class, a module built by a factory) is not compiled code here: rules
stay silent about it.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from torch_lsp.fact_cache import FactKey
from torch_lsp.roles import local_module_classes, reaching_assignment
from torch_lsp.syntax_nodes import call_name, is_self_attribute, keyword, receiver

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis

FunctionNodes = (ast.FunctionDef, ast.AsyncFunctionDef)
COMPILE = "torch.compile"
# Decorators that keep Dynamo out of a function: what runs there is never traced.
NOT_TRACED_DECORATORS = {"torch.compiler.disable", "torch._dynamo.disable", "torch.compiler.allow_in_graph"}
# `if torch.compiler.is_compiling():` guards: the other branch is not traced.
IS_COMPILING = {"torch.compiler.is_compiling", "torch.compiler.is_dynamo_compiling", "torch._dynamo.is_compiling"}
# Calls that return the module they are called on (`Net().to(device)`).
_SAME_MODULE_METHODS = {"to", "cuda", "cpu", "eval", "train", "float", "half", "double", "bfloat16", "requires_grad_"}
_MAX_CALL_DEPTH = 8


@dataclass(frozen=True, eq=False)
class CompiledFunction:
    """A function Dynamo traces: `node`, the `torch.compile` that reaches it (`compile_site`:
    a decorator or a call), its `fullgraph=True`, and its name as the user reads it."""

    node: ast.FunctionDef | ast.AsyncFunctionDef
    compile_site: ast.AST
    fullgraph: bool
    label: str  # "`step`", "`Net.forward`", "`Net.head` (called from compiled `Net.forward`)"


_COMPILED: FactKey[list[CompiledFunction]] = FactKey("functions compiled with torch.compile")


def compiled_functions(analysis: "Analysis") -> list[CompiledFunction]:
    """Every function of this file that runs under `torch.compile`, each once."""
    return analysis.facts.get_or_compute(_COMPILED, lambda: list(_find_compiled(analysis)))


def _find_compiled(analysis: "Analysis") -> Iterator[CompiledFunction]:
    seen: set[ast.AST] = set()
    found: list[CompiledFunction] = []
    for compiled in _compiled_entries(analysis, seen):
        found.append(compiled)
        yield compiled
    yield from _called_helpers(analysis, found, seen)


def _compiled_entries(analysis: "Analysis", seen: set[ast.AST]) -> Iterator[CompiledFunction]:
    """The functions `torch.compile` reaches directly: decorated, passed, or a compiled module's
    `forward` and the methods it calls on `self`."""
    for function in analysis.functions:
        node = function.node
        if not isinstance(node, FunctionNodes):
            continue
        for decorator in node.decorator_list:
            if _is_compile(analysis, decorator):
                seen.add(node)
                label = f"`{function.class_node.name}.{node.name}`" if function.class_node else f"`{node.name}`"
                yield CompiledFunction(node, decorator, _fullgraph(decorator), label)
    # Only a call of `torch.compile` (by any imported name) or a `.compile()` compiles anything:
    # found in the analysis's call indexes, in the order of the file's calls.
    compiling = {id(call) for call in analysis.calls_to(COMPILE)} | {id(call) for call in analysis.iter_calls("compile")}
    for call in analysis.calls if compiling else ():
        if id(call) not in compiling:
            continue
        for compiled in _compiled_by_call(analysis, call):
            if compiled.node not in seen and not _never_traced(analysis, compiled.node):
                seen.add(compiled.node)
                yield compiled


def _called_helpers(analysis: "Analysis", compiled: list[CompiledFunction],
                    seen: set[ast.AST]) -> Iterator[CompiledFunction]:
    """Plain functions of this file that compiled code calls by name (`entropy_of(logits)` in a
    compiled step): Dynamo inlines them, so what breaks there breaks the caller's graph.
    Transitively, each once, with the `fullgraph` of the first compiled caller that reaches it."""
    frontier = list(compiled)
    for _ in range(_MAX_CALL_DEPTH):
        next_frontier = []
        for caller in frontier:
            for node in traced_nodes(caller.node, analysis):
                if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                    continue
                helper = _local_function(analysis, node.func)
                if helper is None or helper in seen or _never_traced(analysis, helper):
                    continue
                seen.add(helper)
                label = f"`{helper.name}` (called from compiled {caller.label.split(' (called', 1)[0]})"
                found = CompiledFunction(helper, caller.compile_site, caller.fullgraph, label)
                next_frontier.append(found)
                yield found
        frontier = next_frontier


def _is_compile(analysis: "Analysis", node: ast.AST) -> bool:
    if isinstance(node, ast.Call):
        node = node.func
    return analysis.qualname(node) == COMPILE


def _fullgraph(site: ast.AST) -> bool:
    if not isinstance(site, ast.Call):
        return False
    found = keyword(site, "fullgraph")
    return found is not None and isinstance(found.value, ast.Constant) and found.value.value is True


def _compiled_by_call(analysis: "Analysis", call: ast.Call) -> Iterator[CompiledFunction]:
    compiles_a_function = analysis.call_qualname(call) == COMPILE
    if compiles_a_function:
        target = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "model"), None)
    elif call_name(call) == "compile" and not call.args and analysis.call_qualname(call) is None:
        target = receiver(call)  # `model.compile()`: nn.Module.compile compiles its forward in place
    else:
        return
    if target is None:
        return
    fullgraph = _fullgraph(call)
    function = _local_function(analysis, target) if compiles_a_function else None
    if function is not None:
        yield CompiledFunction(function, call, fullgraph, f"`{function.name}`")
        return
    owner = analysis.context(call).function.class_node
    if compiles_a_function and owner is not None and is_self_attribute(target):
        method = _own_method(owner, target.attr)  # `self.encode = torch.compile(self._encode)`
        if method is not None:
            yield CompiledFunction(method, call, fullgraph, f"`{owner.name}.{method.name}`")
            return
    cls = _local_module_class(analysis, target, owner)
    if cls is not None:
        yield from _forward_and_its_methods(analysis, cls, call, fullgraph)


def _local_function(analysis: "Analysis", target: ast.AST) -> ast.FunctionDef | None:
    """The one plain (not method) function of this file that `target` names."""
    if not isinstance(target, ast.Name):
        return None
    found = [f.node for f in analysis.function_named(target.id)
             if f.class_node is None and isinstance(f.node, FunctionNodes)]
    return found[0] if len(found) == 1 else None


def _own_method(owner: ast.ClassDef, name: str) -> ast.FunctionDef | None:
    """The method `name` that class `owner` defines itself (once)."""
    found = [stmt for stmt in owner.body if isinstance(stmt, FunctionNodes) and stmt.name == name]
    return found[0] if len(found) == 1 else None


def _local_module_class(analysis: "Analysis", target: ast.AST, owner: ast.ClassDef | None = None) -> ast.ClassDef | None:
    """The local `nn.Module` class an expression surely holds an instance of, or None; for
    `self.model` in a method of `owner`, the class every `self.model = ...` there builds."""
    classes = local_module_classes(analysis)
    if owner is not None and is_self_attribute(target):
        values = [stmt.value for stmt in ast.walk(owner) if isinstance(stmt, ast.Assign)
                  and any(is_self_attribute(t) and t.attr == target.attr for t in stmt.targets)]
        found = {_constructed_class(classes, v) for v in values}
        return found.pop() if len(found) == 1 else None
    if isinstance(target, ast.Name):
        assignment = reaching_assignment(analysis, target)
        if assignment is not None:
            return _constructed_class(classes, assignment.value)
        values = analysis.assigned_values.get(target.id, [])
        found = {_constructed_class(classes, v) for v in values}
        return found.pop() if len(found) == 1 else None
    return _constructed_class(classes, target)


def _constructed_class(classes: dict[str, ast.ClassDef], value: ast.AST | None) -> ast.ClassDef | None:
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
            and value.func.attr in _SAME_MODULE_METHODS:
        value = value.func.value
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
        return classes.get(value.func.id)
    return None


def _forward_and_its_methods(analysis: "Analysis", cls: ast.ClassDef, site: ast.Call,
                             fullgraph: bool) -> Iterator[CompiledFunction]:
    methods = _methods(analysis, cls)
    forward = methods.get("forward")
    if forward is None:
        return
    owner = _owner_name(analysis, forward, cls)
    entry = f"`{owner}.forward`"
    yield CompiledFunction(forward, site, fullgraph, entry)
    reached, frontier = {forward}, [forward]
    for _ in range(_MAX_CALL_DEPTH):
        next_frontier = []
        for function in frontier:
            for name in _self_method_calls(analysis, function):
                method = methods.get(name)
                if method is None or method in reached or _never_traced(analysis, method):
                    continue
                reached.add(method)
                next_frontier.append(method)
                label = f"`{_owner_name(analysis, method, cls)}.{name}` (called from compiled {entry})"
                yield CompiledFunction(method, site, fullgraph, label)
        frontier = next_frontier


def _methods(analysis: "Analysis", cls: ast.ClassDef) -> dict[str, ast.FunctionDef]:
    """The methods of `cls`, with those it inherits from local base classes."""
    classes = local_module_classes(analysis)
    found: dict[str, ast.FunctionDef] = {}
    chain, current = [], cls
    while current is not None and current not in chain and len(chain) < _MAX_CALL_DEPTH:
        chain.append(current)
        bases = [b.id for b in current.bases if isinstance(b, ast.Name) and b.id in classes]
        current = classes[bases[0]] if len(bases) == 1 else None
    for owner in reversed(chain):  # the subclass's own methods override its bases'
        for stmt in owner.body:
            if isinstance(stmt, FunctionNodes):
                found[stmt.name] = stmt
    return found


def _owner_name(analysis: "Analysis", method: ast.AST, cls: ast.ClassDef) -> str:
    parent = analysis.parents.get(method)
    return parent.name if isinstance(parent, ast.ClassDef) else cls.name


def _self_method_calls(analysis: "Analysis", function: ast.FunctionDef) -> Iterator[str]:
    for node in traced_nodes(function, analysis):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "self":
            yield node.func.attr


def _never_traced(analysis: "Analysis", function: ast.FunctionDef) -> bool:
    return any(analysis.qualname(d.func if isinstance(d, ast.Call) else d) in NOT_TRACED_DECORATORS
               for d in function.decorator_list)


def traced_nodes(function: ast.FunctionDef, analysis: "Analysis | None" = None) -> Iterator[ast.AST]:
    """Every statement and expression of `function`'s body that Dynamo traces, in source
    order: not the bodies of nested functions, lambdas and classes (they run only if called),
    nor the branch an `if torch.compiler.is_compiling()` guard keeps from the compiler
    (`analysis` resolves the guard's name; without it every branch counts)."""
    stack: list[ast.AST] = list(reversed(function.body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (*FunctionNodes, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.If) and analysis is not None:
            traced = _traced_branch(analysis, node)
            if traced is not None:
                stack.extend(reversed(traced))
                continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _traced_branch(analysis: "Analysis", stmt: ast.If) -> list[ast.stmt] | None:
    """The branch Dynamo traces under an `is_compiling()` test (None: not such a test)."""
    test, negated = stmt.test, False
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, negated = test.operand, True
    if not (isinstance(test, ast.Call) and analysis.call_qualname(test) in IS_COMPILING):
        return None
    return stmt.orelse if negated else stmt.body

"""What definitions say, read from the syntax tree: parameters, decorators, the
statements of a body, the attributes a method assigns."""
from __future__ import annotations

import ast
from functools import lru_cache
from typing import TYPE_CHECKING

from torch_lsp import memos
from torch_lsp.syntax_nodes import walk_nodes

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis

DATACLASS_DECORATORS = {"dataclass", "dataclasses.dataclass"}


def positional_params(node: ast.AST | None) -> list[ast.arg]:
    if node is None or not hasattr(node, "args"):
        return []
    return list(node.args.posonlyargs) + list(node.args.args)


class Signature:
    """A def's parameters as the interpreter binds them, read once per function per pass
    (every call of the function needs them, and most calls are memo hits)."""

    __slots__ = ("positional", "names", "kwonly", "defaults", "sized_defaults", "vararg", "kwarg", "is_staticmethod")

    def __init__(self, node: ast.AST):
        self.positional = positional_params(node)
        self.names = tuple(p.arg for p in self.positional)
        arguments = getattr(node, "args", None)
        self.kwonly = list(arguments.kwonlyargs) if arguments is not None else []
        self.vararg = arguments.vararg if arguments is not None else None
        self.kwarg = arguments.kwarg if arguments is not None else None
        defaults: dict[str, ast.AST] = {}
        if arguments is not None and arguments.defaults:
            defaults.update(zip(self.names[-len(arguments.defaults):], arguments.defaults))
        if arguments is not None:
            for param, default in zip(arguments.kwonlyargs, arguments.kw_defaults):
                if default is not None:
                    defaults[param.arg] = default
        self.defaults = defaults  # parameter name -> its default's expression
        # Parameters whose default is a literal size (`num_classes=10`, `(4, 4)`): a call that
        # leaves them out still says something about shapes.
        self.sized_defaults = {name for name, default in defaults.items() if _is_size_literal(default)}
        self.is_staticmethod = is_staticmethod(node)

    def accepts(self, bound: bool, given: int, keywords) -> bool:
        """A call with `given` positional arguments (after the bound `self`, if any) and these
        keywords can bind: no more positional arguments than it takes, no unknown keyword."""
        if self.vararg is None and given > len(self.positional) - (1 if bound and self.positional else 0):
            return False
        if self.kwarg is None and keywords:
            known = set(self.names).union(param.arg for param in self.kwonly)
            return all(name in known for name in keywords)
        return True

    def leaves_sized_defaults(self, bound: bool, given: int, keywords) -> bool:
        """A call with `given` positional arguments and these keywords leaves out a parameter
        whose default is a literal size."""
        passed = set(self.names[:given + (1 if bound else 0)]) | set(keywords)
        return bool(self.sized_defaults - passed)


def _is_size_literal(node: ast.AST) -> bool:
    if isinstance(node, (ast.Tuple, ast.List)):
        return bool(node.elts) and all(_is_size_literal(e) for e in node.elts)
    return isinstance(node, ast.Constant) and type(node.value) is int


def takes_self(node: ast.AST) -> bool:
    if is_staticmethod(node) or not positional_params(node):
        return False
    return not any(isinstance(d, ast.Name) and d.id == "classmethod" for d in node.decorator_list)


def is_staticmethod(node: ast.AST) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in getattr(node, "decorator_list", ()))


def is_property(node: ast.AST) -> bool:
    return any(isinstance(d, ast.Name) and d.id in ("property", "cached_property") or
               isinstance(d, ast.Attribute) and d.attr == "cached_property" for d in node.decorator_list)


def module_body(tree: ast.AST, is_main: bool) -> list[ast.stmt]:
    body = getattr(tree, "body", [])
    if is_main:
        return body
    return [s for s in body if not (isinstance(s, ast.If) and any(
        isinstance(n, ast.Constant) and n.value == "__main__" for n in ast.walk(s.test)))]


def breaks_or_continues(body: list[ast.stmt]) -> bool:
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Break, ast.Continue)):
            return True
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stack.extend(getattr(node, "orelse", []))
            continue
        for name in ("body", "orelse", "finalbody", "handlers"):
            stack.extend(getattr(node, name, []))
    return False


def self_attributes_assigned(function: ast.AST) -> set[str]:
    names = set()
    self_name = positional_params(function)[0].arg if positional_params(function) else None
    if self_name is None:
        return names
    for node in statements_of(function):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for target in targets:
            for part in walk_nodes(target):
                if isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name) and part.value.id == self_name \
                        and isinstance(part.ctx, ast.Store):
                    names.add(part.attr)
    return names


def builders_of_init(cls: ast.ClassDef, candidates: set[str]) -> set[str]:
    """Which of the `candidates` methods are only ever called as `self.name(...)` from
    `__init__` or from other such methods (`_make_layer`): what they assign to `self` is part
    of construction, not live state."""
    methods = {s.name: s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
    callers: dict[str, set[str]] = {name: set() for name in candidates}
    for name, method in methods.items():
        for node in walk_nodes(method):
            if isinstance(node, ast.Attribute) and node.attr in callers and node.attr != name:
                parent_call = isinstance(node.value, ast.Name) and node.value.id == "self"
                callers[node.attr].add(name if parent_call else "<other>")
    builders: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, called_by in callers.items():
            if name in builders or name == "__init__" or not called_by:
                continue
            if all(c == "__init__" or c in builders for c in called_by):
                builders.add(name)
                changed = True
    return builders


def statements_of(function: ast.AST):
    """Every statement inside a function (not the expressions: cheaper than `ast.walk`)."""
    stack = list(function.body)
    while stack:
        node = stack.pop()
        yield node
        for name in ("body", "orelse", "finalbody", "handlers"):
            stack.extend(getattr(node, name, ()))


def assigned_foreign_attributes(analysis: "Analysis") -> set[str]:
    """Attributes assigned on objects other than `self` (`model.fc = nn.Linear(...)`), or
    whose items are (`model.classifier[-1] = ...`): their values depend on which object, so
    instance reads of these names are not trusted."""
    names = set()
    for stmt in analysis.statements:
        kind = stmt.__class__
        if kind is ast.Assign:
            targets = stmt.targets
        elif kind is ast.AugAssign or kind is ast.AnnAssign:
            targets = [stmt.target]
        else:
            continue
        for target in targets:
            if target.__class__ is ast.Subscript and target.value.__class__ is ast.Attribute:
                target = target.value  # `model.classifier[-1] = nn.Linear(...)` changes `classifier`
            if target.__class__ is ast.Attribute and not (target.value.__class__ is ast.Name
                                                          and target.value.id in ("self", "cls")):
                names.add(target.attr)
    return names


def is_parameter_call(analysis: "Analysis", value: ast.AST) -> bool:
    return isinstance(value, ast.Call) and analysis.qualname(value.func) in (
        "torch.nn.Parameter", "torch.nn.parameter.Parameter")


def shape_subject(node: ast.AST) -> tuple[ast.AST, str] | None:
    """(`x`, "shape") for `x.shape`/`x.size()`, (`x`, "rank") for `x.dim()`/`x.ndim`/`len(x.shape)`."""
    if isinstance(node, ast.Attribute) and node.attr == "shape":
        return node.value, "shape"
    if isinstance(node, ast.Attribute) and node.attr == "ndim":
        return node.value, "rank"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args:
        if node.func.attr == "size":
            return node.func.value, "shape"
        if node.func.attr == "dim":
            return node.func.value, "rank"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len" and len(node.args) == 1:
        inner = shape_subject(node.args[0])
        if inner is not None and inner[1] == "shape":
            return inner[0], "rank"
    return None


def is_generator(function: ast.AST) -> bool:
    """A function with a `yield` statement (`yield x`, `y = yield x`): calling it returns a generator."""
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    for stmt in statements_of(function):
        value = getattr(stmt, "value", None)
        if isinstance(value, (ast.Yield, ast.YieldFrom)):
            return True
    return False


@lru_cache(maxsize=4096)
def torch_layer_name(qualname: str) -> str | None:
    """`Linear` for `torch.nn.Linear` or `torch.nn.modules.linear.Linear`."""
    if not qualname.startswith("torch.nn."):
        return None
    last = qualname.rsplit(".", 1)[1]
    if qualname.count(".") == 2 or qualname.startswith("torch.nn.modules."):
        return last if last[:1].isupper() else None
    return None


memos.register(torch_layer_name.cache_clear)

"""Project functions that turn autograd off for what they wrap.

yolov5's `@smart_inference_mode()` (in `utils/torch_utils.py`) returns
`(torch.inference_mode if new_torch else torch.no_grad)()(fn)`; other projects write
`def no_grad_eval(fn): ... with torch.no_grad(): return fn(*args)` or a
`@contextmanager` that yields inside `torch.no_grad()`.  A function decorated with such
a wrapper, or a block run inside such a context manager, runs with autograd off, exactly
as under `@torch.no_grad()`: `Analysis` asks `wraps_grad_off` about every decorator and
`with` item that is not a torch grad-mode manager, so TL103, TL107 and TL302 (and any
rule reading `Context.grad_disabled`) see it.

For each file, `grad_off_wrappers` records which of its top-level functions wrap
no_grad/inference_mode, and how (as a decorator, as a context manager).  A wrapper
imported from another file of the workspace (`from utils.torch_utils import
smart_inference_mode`) is looked up there (`workspace_files`).
"""
from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from torch_lsp.fact_cache import FactKey
from torch_lsp.syntax_nodes import walk_nodes
from torch_lsp.workspace_files import workspace_analysis

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis

@dataclass(frozen=True)
class GradOffWrapper:
    """A top-level function that runs what it wraps with autograd off."""

    name: str
    line: int  # where it is defined, for related information
    as_decorator: bool  # `@name` / `@name()` disables autograd in the decorated function
    as_context: bool  # `with name(...):` disables autograd in the block


@dataclass(frozen=True)
class WrapperUse:
    """A decorator or `with` item that resolved to a project grad-off wrapper."""

    wrapper: GradOffWrapper
    path: str | None  # the file defining it; None for the same file


_WRAPPERS: FactKey[dict[str, GradOffWrapper]] = FactKey("top-level functions that wrap no_grad")


def grad_off_wrappers(analysis: "Analysis") -> dict[str, GradOffWrapper]:
    """The file's top-level functions that wrap `torch.no_grad()`/`inference_mode()`, by name."""
    return analysis.facts.get_or_compute(_WRAPPERS, lambda: _find_wrappers(analysis))


def wraps_grad_off(analysis: "Analysis", expr: ast.AST, as_context: bool) -> WrapperUse | None:
    """The project wrapper a decorator (`as_context` False) or `with` item names, when it
    disables autograd; None when it is anything else or cannot be resolved."""
    target = expr.func if isinstance(expr, ast.Call) else expr
    if isinstance(target, ast.Name) and target.id not in analysis.imports:
        use = _local_use(analysis, target.id)
    else:
        qualname = analysis.qualname(target)
        use = _imported_use(analysis, qualname) if qualname and "." in qualname else None
    if use is None:
        return None
    # `@wrapper()` calls a factory and `@wrapper` is the decorator itself: both are written.
    return use if (use.wrapper.as_context if as_context else use.wrapper.as_decorator) else None


_WRAPPER_BY_NAME: FactKey[dict[str, GradOffWrapper | None]] = FactKey("grad-off wrapper, per top-level name asked")


def _local_use(analysis: "Analysis", name: str) -> WrapperUse | None:
    wrapper = wrapper_named(analysis, name)
    return WrapperUse(wrapper, None) if wrapper else None


def wrapper_named(analysis: "Analysis", name: str) -> GradOffWrapper | None:
    """The file's top-level function `name` when it wraps no_grad (one function examined,
    not the file: decorators such as `@property` are asked about in every file)."""
    cache = analysis.facts.get_or_compute(_WRAPPER_BY_NAME, dict)
    if name not in cache:
        cache[name] = None
        if analysis.tree is not None:
            for node in analysis.tree.body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                    cache[name] = _wrapper(analysis, node)
    return cache[name]


def _imported_use(analysis: "Analysis", qualname: str) -> WrapperUse | None:
    from torch_lsp.analysis import is_torch_ecosystem_module

    module, name = qualname.rsplit(".", 1)
    if is_torch_ecosystem_module(module) or module.split(".")[0] in sys.stdlib_module_names:
        return None
    other = workspace_analysis(module, analysis.path)
    if other is None:
        return None
    wrapper = wrapper_named(other, name)
    return WrapperUse(wrapper, other.path) if wrapper else None


# ------------------------------------------------------------ what a function does
def _find_wrappers(analysis: "Analysis") -> dict[str, GradOffWrapper]:
    found: dict[str, GradOffWrapper] = {}
    if analysis.tree is None:
        return found
    for node in analysis.tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            wrapper = wrapper_named(analysis, node.name)
            if wrapper is not None:
                found[node.name] = wrapper
    return found


def _wrapper(analysis: "Analysis", node: ast.AST) -> GradOffWrapper | None:
    as_decorator, as_context = _wraps(analysis, node)
    return GradOffWrapper(node.name, node.lineno, as_decorator, as_context) if as_decorator or as_context else None


def _wraps(analysis: "Analysis", function: ast.AST) -> tuple[bool, bool]:
    """(wraps a function it is given, is a context manager) with autograd off."""
    params = {a.arg for n in walk_nodes(function) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
              for a in n.args.posonlyargs + n.args.args + n.args.kwonlyargs}
    as_decorator = as_context = False
    for node in walk_nodes(function):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Call) and _grad_off(analysis, node.func):
            # `torch.no_grad()(fn)`, `(torch.inference_mode if new else torch.no_grad)()(fn)`
            as_decorator = as_decorator or any(isinstance(a, ast.Name) and a.id in params for a in node.args)
        elif isinstance(node, (ast.With, ast.AsyncWith)) and any(_grad_off(analysis, i.context_expr) for i in node.items):
            inner = [n for s in node.body for n in walk_nodes(s)]
            as_context = as_context or any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in inner)
            as_decorator = as_decorator or any(
                isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in params for n in inner)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node is not function and any(
                _grad_off(analysis, d) for d in node.decorator_list):
            # `@torch.no_grad() def wrapper(*args): return fn(*args)`
            as_decorator = as_decorator or any(
                isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in params for n in walk_nodes(node))
    return as_decorator, as_context


def _grad_off(analysis: "Analysis", expr: ast.AST) -> bool:
    """A torch grad-off manager, or a choice between two of them (`a if c else b`, called)."""
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.IfExp) and not expr.args:
        choice = expr.func
        return all(analysis.grad_mode_effect(side) is True for side in (choice.body, choice.orelse))
    return analysis.grad_mode_effect(expr) is True

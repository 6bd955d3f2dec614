"""Where the symbols of a shape come from, and the annotation that would name an unknown size.

Hover explains each symbol of the shape it shows, in the function the node is in:

- a size named because call sites disagree (`contexts`): its size at each call;
- a parameter of the function, of its class's `__init__` or of a function of the file
  (`in_channels`): that argument;
- a name the function binds (`B, C, H, W = x.shape`): that statement;
- an attribute read in the function or class (`config.n_embd`): that attribute.

Where dims stay unknown (`?`), `suggested_shape` is the one statement of the shape that
would name them: a jaxtyping annotation on a parameter (`x: Float[Tensor, "B 784"]`), a
shape comment on an assignment (`# [B, 784]`); unknown dims get the name of their role.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from torch_lsp.shapes.contexts import ROLE_NAMES, ContextNames
from torch_lsp.shapes.values import Tensor
from torch_lsp.syntax_nodes import walk_nodes

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.shapes.frame import Frame

MAX_EXPLAINED = 6
MAX_SITES = 4


@dataclass(frozen=True)
class SuggestedShape:
    """The statement of a shape that names every dim of a binding."""

    kind: str  # "annotation" (a parameter) | "comment" (an assignment)
    dims: tuple[str, ...]  # one word per dim: "B", "784", "3*n_embd"
    line: int  # 1-based line of the binding
    col: int  # UTF-8 byte column just after the name (annotation) or the line's end (comment)

    @property
    def text(self) -> str:
        if self.kind == "annotation":
            return f': Float[Tensor, "{" ".join(self.dims)}"]'
        return f"  # [{', '.join(self.dims)}]"


def suggested_shape(analysis: "Analysis", node: ast.AST, tensor: Tensor) -> SuggestedShape | None:
    """The annotation or comment that would name the unknown dims of `tensor` bound at `node`
    (None when its rank is unknown or nothing is unknown)."""
    if tensor.rank is None or None not in tensor.dims:
        return None
    roles = ROLE_NAMES.get(tensor.rank) or tuple(f"D{i}" for i in range(tensor.rank))
    taken = set().union(*(d.symbols() for d in tensor.dims if d is not None))
    words = []
    for index, dim in enumerate(tensor.dims):
        if dim is not None:
            words.append(dim.render().replace(" ", ""))
            continue
        name, counter = roles[index], 1
        while name in taken:
            counter += 1
            name = f"{roles[index]}{counter}"
        taken.add(name)
        words.append(name)
    if isinstance(node, ast.arg):
        if node.annotation is not None:
            return None
        return SuggestedShape("annotation", tuple(words), node.lineno, node.col_offset + len(node.arg.encode("utf-8")))
    statement = analysis.parents.get(node)
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1 or statement.targets[0] is not node:
        return None
    if statement.end_lineno != statement.lineno:
        return None
    text = analysis.lines.line_text(statement.lineno)
    if "#" in text:
        return None  # a comment is there already: adding a second one is not ours to do
    return SuggestedShape("comment", tuple(words), statement.lineno, len(text.rstrip().encode("utf-8")))


def symbol_origins(analysis: "Analysis", node: ast.AST, tensor: Tensor, names: ContextNames | None) -> list[str]:
    """One line per symbol of `tensor`: where it comes from."""
    symbols: list[str] = []
    for dim in tensor.dims:
        for name in sorted(dim.symbols()) if dim is not None else ():
            if name not in symbols:
                symbols.append(name)
    lines = []
    function = _enclosing(analysis, node, (ast.FunctionDef, ast.AsyncFunctionDef))
    cls = _enclosing(analysis, node, (ast.ClassDef,))
    for name in symbols[:MAX_EXPLAINED]:
        text = _context_origin(name, names) or _syntactic_origin(analysis, name, function, cls)
        if text:
            lines.append(f"`{name}`: {text}")
    return lines


def _context_origin(name: str, names: ContextNames | None) -> str | None:
    named = names.origin_of(name) if names is not None else None
    if named is None:
        return None
    sizes = []
    for frame, size in zip(names.contexts, named.vector):
        if size is None:
            continue
        site = _call_site_line(frame)
        sizes.append(f"{size.render()} (call on line {site})" if site else size.render())
    unique = list(dict.fromkeys(sizes))
    shown = ", ".join(unique[:MAX_SITES])
    more = ", ..." if len(unique) > MAX_SITES else ""
    return f"a size that differs between the calls of this function: {shown}{more}"


def _call_site_line(frame: "Frame") -> int | None:
    """The line of the call in module-level code or a plain function that led to `frame`."""
    current, line = frame, None
    for _ in range(32):
        if current.caller is None:
            return line
        caller, site = current.caller
        if site is not None:
            line = site.lineno
        if caller is None or caller.node.__class__ is ast.Module:
            return line
        current = caller
    return line


def _syntactic_origin(analysis: "Analysis", name: str, function: ast.AST | None, cls: ast.AST | None) -> str | None:
    if function is not None:
        if any(a.arg == name for a in _parameters(function)):
            return f"the argument `{name}` of `{function.name}`"
        for statement in walk_nodes(function):
            if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.For)) and _binds(statement, name):
                text = " ".join(analysis.lines.line_text(statement.lineno).split())
                return f"from `{text[:60]}` (line {statement.lineno})"
    if cls is not None:
        for method in cls.body:
            if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                    a.arg == name for a in _parameters(method)):
                return f"the argument `{name}` of `{cls.name}.{method.name}`"
    for scope in (function, cls):
        attribute = next(_attributes_named(scope, name), None) if scope is not None else None
        if attribute is not None:
            text = ast.unparse(attribute)
            return f"the value of `{text}`" if len(text) <= 60 else None
    return None


def _parameters(function: ast.AST) -> list[ast.arg]:
    args = function.args
    return args.posonlyargs + args.args + args.kwonlyargs


def _binds(statement: ast.AST, name: str) -> bool:
    targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
    return any(isinstance(n, ast.Name) and n.id == name for t in targets for n in walk_nodes(t))


def _attributes_named(scope: ast.AST, name: str) -> Iterator[ast.Attribute]:
    for node in walk_nodes(scope):
        if isinstance(node, ast.Attribute) and node.attr == name and isinstance(node.ctx, ast.Load):
            yield node


def _enclosing(analysis: "Analysis", node: ast.AST, kinds: tuple) -> ast.AST | None:
    current = analysis.parents.get(node)
    while current is not None and not isinstance(current, kinds):
        current = analysis.parents.get(current)
    return current

"""Where the symbols of a shape come from, and the annotation that would name an unknown size.

Hover explains each symbol of the shape it shows, in the function the node is in:

- a size named because call sites disagree (`contexts`): its size at each call;
- a parameter of the function, of its class's `__init__` or of a function of the file
  (`in_channels`): that argument;
- a name the function binds (`B, C, H, W = x.shape`): that statement;
- a field of a configuration object (`config.n_embd`, read directly or through
  `self.n_embd = config.n_embd`): the config class's field and its default
  (`GPTConfig.n_embd`, default 768) when the file declares it;
- another attribute read in the function or class: that attribute.

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
            return _attribute_origin(analysis, attribute, function, cls)
    return None


def _attribute_origin(analysis: "Analysis", attribute: ast.Attribute, function: ast.AST | None,
                      cls: ast.AST | None) -> str | None:
    """`config field `GPTConfig.n_embd` (default 768)` for a field of a config object (read
    directly, or through `self.n_embd = config.n_embd`), else the attribute's text."""
    attribute = _assigned_from(attribute, cls)
    field = config_field(analysis, attribute, function, cls)
    if field is not None:
        return field
    text = ast.unparse(attribute)
    return f"the value of `{text}`" if len(text) <= 60 else None


def _assigned_from(attribute: ast.Attribute, cls: ast.AST | None) -> ast.Attribute:
    """For `self.n_embd`, the attribute its class assigns it from (`self.n_embd = config.n_embd`)."""
    if cls is None or not (isinstance(attribute.value, ast.Name) and attribute.value.id == "self"):
        return attribute
    for node in ast.walk(cls):
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Attribute)
                and isinstance(node.targets[0], ast.Attribute) and node.targets[0].attr == attribute.attr
                and isinstance(node.targets[0].value, ast.Name) and node.targets[0].value.id == "self"):
            return node.value
    return attribute


# Names that hold a configuration object in the code people write (`config.n_embd`, `cfg.hidden_size`).
CONFIG_NAMES = frozenset({"config", "cfg", "conf", "args", "hparams", "hp", "opt", "opts", "params", "settings",
                          "model_config", "model_args", "hyperparams"})
MAX_DEFAULT_CHARS = 24


def config_field(analysis: "Analysis", attribute: ast.Attribute, function: ast.AST | None,
                 cls: ast.AST | None) -> str | None:
    """Where a size read from a configuration object comes from: its class's field and default
    when the class is known (an annotation of the object, or the one config-like class of the
    file that declares the field), else the field of the object; None when the attribute is
    not read from one."""
    holder = _holder_name(attribute.value)
    if holder is None:
        return None
    name = attribute.attr
    class_name = _annotated_class(holder, function, cls)
    declaring = _declaring_class(analysis, name, class_name)
    if declaring is not None:
        default = _field_default(declaring, name)
        return f"config field `{declaring.name}.{name}`" + (f" (default {default})" if default else "")
    if class_name is not None:
        return f"config field `{class_name}.{name}`"
    if holder.lower() in CONFIG_NAMES or holder.lower().endswith(("config", "cfg")):
        return f"config field `{name}` of `{holder}`"
    return None


def _holder_name(value: ast.AST) -> str | None:
    """`config` for `config.n_embd` and `self.config.n_embd`."""
    if isinstance(value, ast.Name):
        return value.id if value.id != "self" else None
    if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id == "self":
        return value.attr
    return None


def _annotated_class(holder: str, function: ast.AST | None, cls: ast.AST | None) -> str | None:
    """The class a parameter named `holder` is annotated with, in the function or its class's methods."""
    functions = [function] if function is not None else []
    if cls is not None:
        functions += [m for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for candidate in functions:
        for parameter in _parameters(candidate):
            if parameter.arg == holder and parameter.annotation is not None:
                annotation = parameter.annotation
                if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
                    return annotation.value
                if isinstance(annotation, ast.Name):
                    return annotation.id
                if isinstance(annotation, ast.Attribute):
                    return annotation.attr
    return None


def _declaring_class(analysis: "Analysis", field: str, class_name: str | None) -> ast.ClassDef | None:
    """The class of the file that declares `field` at class level: the annotated one, else the
    only config-like one (a dataclass, or named like a config) that does."""
    if class_name is not None:
        named = analysis.classes.get(class_name)
        return named if named is not None and _field_default(named, field) is not None else None
    found = [c for c in analysis.classes.values()
             if _looks_like_config(c) and _field_default(c, field) is not None]
    return found[0] if len(found) == 1 else None


def _looks_like_config(cls: ast.ClassDef) -> bool:
    decorated = any("dataclass" in ast.unparse(d) for d in cls.decorator_list)
    return decorated or cls.name.lower().endswith(("config", "cfg", "args", "params", "settings", "hparams"))


def _field_default(cls: ast.ClassDef, field: str) -> str | None:
    """The default of a class-level field as written (`768`; `field(default=768)` gives 768);
    "" for a field without one (or one too long to show); None when the class has no such field."""
    for statement in cls.body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            target, value = statement.target.id, statement.value
        elif (isinstance(statement, ast.Assign) and len(statement.targets) == 1
              and isinstance(statement.targets[0], ast.Name)):
            target, value = statement.targets[0].id, statement.value
        else:
            continue
        if target != field:
            continue
        if isinstance(value, ast.Call) and getattr(value.func, "id", getattr(value.func, "attr", None)) == "field":
            value = next((k.value for k in value.keywords if k.arg == "default"), None)
        text = ast.unparse(value) if value is not None else ""
        return text if len(text) <= MAX_DEFAULT_CHARS else ""
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

"""Pure questions about `ast` nodes: what a call is named, what it is called on, which
argument it passes, where a node's text starts and ends.

A leaf module: it imports nothing of this package, so `analysis`, `roles`, the rules
and the fixes can all use it without import cycles.  Nothing here resolves imports or
knows about scopes; that is `analysis`.
"""
from __future__ import annotations

import ast
from collections import deque
from typing import Iterator

from torch_lsp import memos


def call_name(call: ast.Call) -> str | None:
    """`f` for `f(...)`, `m` for `obj.m(...)`."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def receiver(call: ast.Call) -> ast.AST | None:
    """`obj` for `obj.m(...)`."""
    return call.func.value if isinstance(call.func, ast.Attribute) else None


def node_key(node: object) -> object:
    """A hashable key equal for two syntax trees of the same shape and values (what comparing
    their `ast.dump` says), built without `ast.dump`: its nested `_format` refers to itself, so
    every call leaves a reference cycle for the garbage collector, which the server runs only
    when idle."""
    if isinstance(node, ast.AST):
        return (type(node).__name__, *(node_key(getattr(node, field, None)) for field in node._fields))
    if isinstance(node, list):
        return tuple(node_key(item) for item in node)
    # The type too: `1`, `1.0` and `True` are equal in Python, not in a syntax tree.
    return (type(node).__name__, node if isinstance(node, (str, int, float, complex, bytes, bool)) else repr(node))


def dotted(node: ast.AST | None) -> str | None:
    """`a.b.c` for a Name/Attribute chain, else None (no import resolution)."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


def keyword(call: ast.Call, name: str) -> ast.keyword | None:
    for kw in call.keywords:
        if kw.arg == name:
            return kw
    return None


def has_star_args(call: ast.Call) -> bool:
    """`f(*args)` or `f(**kwargs)`.  Asked of every call by several rules: plain loops."""
    for arg in call.args:
        if isinstance(arg, ast.Starred):
            return True
    for kw in call.keywords:
        if kw.arg is None:
            return True
    return False


def argument(call: ast.Call, position: int, name: str) -> ast.AST | None:
    """The argument passed at `position` or as `name=`."""
    kw = keyword(call, name)
    if kw is not None:
        return kw.value
    if len(call.args) > position and not any(isinstance(a, ast.Starred) for a in call.args[: position + 1]):
        return call.args[position]
    return None


def root_name(expr: ast.AST) -> str | None:
    """`a` for `a`, `a.b`, `a[0].c`, `a.b()`."""
    while isinstance(expr, (ast.Attribute, ast.Subscript, ast.Call)):
        expr = expr.func if isinstance(expr, ast.Call) else expr.value
    return expr.id if isinstance(expr, ast.Name) else None


def is_self_attribute(node: ast.AST) -> bool:
    """`self.x`."""
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"


def is_self_attribute_named(node: ast.AST, attr: str) -> bool:
    """`self.<attr>`."""
    return is_self_attribute(node) and node.attr == attr


def is_none(node: ast.AST | None) -> bool:
    """The literal `None`."""
    return isinstance(node, ast.Constant) and node.value is None


def accumulation(stmt: ast.stmt) -> tuple[ast.AST, ast.AST, str] | None:
    """(container, value, kind) for `c.append(v)` ("append"), `c.extend(v)` ("extend"), `c += v`
    (`c` a name or `self.c`), `c = c + v` / `c = v + c` ("sum")."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        kind = call_name(call)
        if kind in ("append", "extend") and isinstance(call.func, ast.Attribute) and len(call.args) == 1 \
                and not call.keywords:
            return call.func.value, call.args[0], kind
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add) and (
            isinstance(stmt.target, ast.Name) or is_self_attribute(stmt.target) or _keyed_total(stmt.target)):
        return stmt.target, stmt.value, "sum"  # `self.total += loss`, `sums["loss"] += loss` too
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        target, value = stmt.targets[0], running_sum(stmt)
        if value is not None:
            if _is_scaled(value.left, target.id):  # `ema = 0.98 * ema + 0.02 * loss` too
                return target, value.right, "sum"
            if _is_scaled(value.right, target.id):
                return target, value.left, "sum"
    return None


def running_sum(stmt: ast.Assign) -> ast.BinOp | None:
    """The `+` of `total = total + v`, also the branch of a first-iteration start
    (`ema = loss if ema is None else 0.99 * ema + 0.01 * loss`) that adds onto the total."""
    value = stmt.value
    if isinstance(value, ast.IfExp):
        target = stmt.targets[0]
        branches = [b for b in (value.body, value.orelse) if isinstance(b, ast.BinOp) and isinstance(b.op, ast.Add)
                    and isinstance(target, ast.Name) and (_is_scaled(b.left, target.id) or _is_scaled(b.right, target.id))]
        value = branches[0] if len(branches) == 1 else None
    return value if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add) else None


def _keyed_total(target: ast.AST) -> bool:
    """`sums["loss"]`, `self.totals[name]`: one entry of a dict or list of running totals."""
    if not isinstance(target, ast.Subscript):
        return False
    root = target.value
    return isinstance(root, ast.Name) or is_self_attribute(root)


def _is_scaled(expr: ast.AST, name: str) -> bool:
    """`name`, or `name` times a number (`0.98 * name`, `name * decay`)."""
    if isinstance(expr, ast.Name):
        return expr.id == name
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult):
        pairs = ((expr.left, expr.right), (expr.right, expr.left))
        return any(isinstance(a, ast.Name) and a.id == name and isinstance(b, (ast.Constant, ast.Name))
                   and b is not a and not (isinstance(b, ast.Name) and b.id == name) for a, b in pairs)
    return False


def moved_value(stmt: ast.stmt | None, name: str) -> ast.AST | None:
    """The expression of a statement that can do no more than move `name` (TL402 and its
    fix): an expression statement (`model.to(device)`), or `name = <value>` binding `name`
    alone (`model = model.to(device)`); None for any other statement."""
    if isinstance(stmt, ast.Expr):
        return stmt.value
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target = stmt.targets[0]
        return stmt.value if isinstance(target, ast.Name) and target.id == name else None
    return None


# Calls that move or cast a module or tensor and return it, keeping its mode.
DEVICE_AND_DTYPE_MOVES = frozenset({"to", "cuda", "cpu", "float", "double", "half", "bfloat16"})


def unmoved(value: ast.AST | None) -> ast.AST | None:
    """What a chain of device or dtype moves starts from: `Net()` in `Net().to(device).half()`,
    `model` in `model.cuda()` (a mode switch, `.eval()`, ends the chain)."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
            and value.func.attr in DEVICE_AND_DTYPE_MOVES:
        value = value.func.value
    return value


def is_main_guard(test: ast.AST) -> bool:
    """`__name__ == "__main__"`: the block runs only when the file is the program, never on import."""
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
            and len(test.comparators) == 1 and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__")


def int_constant(node: ast.AST | None) -> int | None:
    """The value of `3` or `-1`, else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = int_constant(node.operand)
        return -inner if inner is not None else None
    return None


# ------------------------------------------------------------------- spans
def loop_header_span(loop_node: ast.AST) -> tuple[int, int, int, int]:
    """`for x in loader` / `while cond` — the header up to the colon, not the body."""
    last = loop_node.test if isinstance(loop_node, ast.While) else loop_node.iter
    return loop_node.lineno, loop_node.col_offset, last.end_lineno, last.end_col_offset


def node_text(lines, node: ast.AST) -> str:
    """The source of a node on one line, whitespace collapsed and comments dropped.

    `lines` is the document's `LineIndex` (`ast.get_source_segment` re-splits the whole
    file on every call, which is far too slow for messages)."""
    line, end_line = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
    if line is None or end_line is None:
        return ast.unparse(node)
    if line != end_line:
        return " ".join(ast.unparse(node).split())
    raw = lines.line_text(line).encode("utf-8")[node.col_offset: node.end_col_offset]
    return " ".join(raw.decode("utf-8", errors="replace").split())


def method_span(call: ast.Call) -> tuple[int, int, int, int]:
    """`.cuda()` in `x.cuda()`: from the dot after the receiver to the closing parenthesis."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.value.end_lineno == call.end_lineno:
        return func.value.end_lineno, func.value.end_col_offset, call.end_lineno, call.end_col_offset
    return call.lineno, call.col_offset, call.end_lineno, call.end_col_offset


def walk_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes `ast.walk(node)` yields, in the same order (breadth first, children in
    field order), about twice as fast: it skips the fields that never hold a node (names,
    flags) and reads the rest directly instead of through `ast.iter_child_nodes`'s
    generators.  Rules and facts walk function bodies and subtrees many times per check."""
    todo = deque((node,))
    take, add = todo.popleft, todo.append
    fields_of = _NODE_FIELDS
    node_type = ast.AST
    while todo:
        node = take()
        kind = node.__class__
        fields = fields_of.get(kind)
        if fields is None:
            fields = fields_of[kind] = tuple(name for name in kind._fields if name not in _FIELDS_WITHOUT_NODES)
        for name in fields:
            value = getattr(node, name, None)
            if isinstance(value, node_type):
                add(value)
            elif type(value) is list:
                for item in value:
                    if isinstance(item, node_type):
                        add(item)
        yield node


# Fields that hold a string, a number or a flag in every node type that has them.
_FIELDS_WITHOUT_NODES = frozenset({
    "id", "attr", "arg", "name", "asname", "module", "kind", "type_comment", "conversion", "is_async", "level",
    "tag",
})
_NODE_FIELDS: dict[type, tuple[str, ...]] = {}
memos.register(_NODE_FIELDS.clear)


def iterated_source(target: ast.AST, source: ast.AST, name: str) -> ast.AST | None:
    """What `name` takes its elements from in `for target in source:`: `source` itself for
    `for name in source`, the matching argument through a `zip` (`for x, g in zip(xs, grads)`,
    nested too); None when the target does not bind `name` that way."""
    if isinstance(target, ast.Name):
        return source if target.id == name else None
    if isinstance(target, (ast.Tuple, ast.List)) and isinstance(source, ast.Call) and call_name(source) == "zip" \
            and len(source.args) == len(target.elts):
        for element, part in zip(target.elts, source.args):
            found = iterated_source(element, part, name)
            if found is not None:
                return found
    return None


def mentions_any(node: ast.AST, names: set[str]) -> bool:
    """A plain name among `names` occurs anywhere in `node`."""
    return any(n.__class__ is ast.Name and n.id in names for n in walk_nodes(node))

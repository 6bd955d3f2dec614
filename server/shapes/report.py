"""What the shape pass tells the front ends about one document version.

The interpreter may run a function several times (standalone, and once per call
context with new argument shapes).  For each node the report shows the call
contexts' shape when they agree and know at least as much as the standalone run,
and the standalone (symbolic) shape otherwise: concrete where the call sites say
so, symbolic where they disagree.
"""
from __future__ import annotations

import ast
import os
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Iterator

from torch_lsp.shapes.dims import Dim, known_sum, product
from torch_lsp.shapes.calls import ModuleCall
from torch_lsp.shapes.components import PartEngines
from torch_lsp.shapes.contexts import ContextNames
from torch_lsp.shapes.parameters import module_parameters, unknown_parameters_reason
from torch_lsp.shapes.symbols import SuggestedShape, suggested_shape, symbol_origins
from torch_lsp.shapes.frame import Frame
from torch_lsp.shapes.interpret import Engine
from torch_lsp.shapes.values import (
    DictValue, Instance, Int, Layer, ListValue, Opaque, Tensor, TupleValue, Value, information, join_all,
)

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.text import LineIndex

FunctionNodes = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True)
class ShapeBinding:
    """A name bound to a tensor: where, and what is known of its shape."""

    line: int  # 1-based
    col: int  # UTF-8 byte offset of the name, 0-based (as `ast`)
    end_col: int
    name: str
    kind: str  # "assign" | "unpack" | "for" | "param"
    tensor: Tensor

    @property
    def dims(self) -> list:
        """The shape as JSON-friendly dims: ints, strings ("B", "3*n_embd"), "?" unknown, "*" leading."""
        return self.tensor.to_json()

    @property
    def origin(self) -> str:
        return self.tensor.origin.describe() if self.tensor.origin is not None else ""


@dataclass(frozen=True)
class InlayHint:
    line: int
    col: int  # UTF-8 byte offset just after the name
    label: str  # ": [B, nh, T, hs]"
    tooltip: str


@dataclass(frozen=True)
class ShapeMismatch:
    """A definite contradiction: this line raises at run time."""

    line: int
    col: int
    end_line: int
    end_col: int
    message: str
    kind: str = "shape"  # "shape": sizes or ranks the op rejects (TL501); "dtype": a dtype it rejects (TL503)
    # When the line that raises is in another file (a call here gives that file's code
    # the shapes that make it fail): that line, the mismatch reported at this file's call.
    raised_in: "RaisedElsewhere | None" = None


@dataclass(frozen=True)
class RaisedElsewhere:
    """The line of another file that a call of this file makes raise, and the mismatch as
    that file shows it (the front ends show it there too, linked to the call)."""

    path: str
    lines: "LineIndex"  # that file's text as the pass read it: the positions refer to it
    line: int
    col: int
    end_line: int
    end_col: int
    message: str


@dataclass(frozen=True)
class Hover:
    line: int
    col: int
    end_line: int
    end_col: int
    markdown: str


def main_frames_by_node(frames_by_function: dict[ast.AST, list[Frame]]) -> dict[ast.AST, list[Frame]]:
    """The frames of the main file that recorded each node, from an engine's frames."""
    table: dict[ast.AST, list[Frame]] = {}
    for frames in frames_by_function.values():
        for frame in frames:
            if not frame.scope.is_main:
                continue
            for node in frame.values:
                table.setdefault(node, []).append(frame)
    return table


class ShapeReport:
    """Shapes of one document version; built once, answers hovers and inlay hints."""

    def __init__(self, analysis: "Analysis", engine: Engine):
        self.analysis = analysis
        self.engine = engine
        self.error: str | None = None  # an internal error's traceback, when the pass stopped on one
        self._context_names: dict[ast.AST, ContextNames | None] = {}

    @property
    def complete(self) -> bool:
        return not self.engine.exhausted

    # -- merged values ---------------------------------------------------------------------
    @cached_property
    def _frames_by_node(self) -> dict[ast.AST, list[Frame]]:
        """Main-file frames that recorded each node (of a file run in parts: each part run's
        table, kept with the run, so that an edit builds only its own part's again)."""
        if isinstance(self.engine, PartEngines):
            return self.engine.frames_by_node(main_frames_by_node)
        return main_frames_by_node(self.engine.frames_by_function)

    def value_of(self, node: ast.AST) -> Value | None:
        """What is known of an expression, name or parameter of this file (None: never reached)."""
        frames = self._frames_by_node.get(node)
        if not frames:
            return None
        value = choose(frames, lambda f: f.values[node])
        if value.__class__ is Tensor and (value.variadic or None in value.dims):
            named = self._named_across_contexts(node, frames)
            if named is not None and information(named) > information(value):
                return named
        return value

    def _named_across_contexts(self, node: ast.AST, frames: list[Frame]) -> Tensor | None:
        """The shape with the sizes its call contexts disagree on named (see `contexts`)."""
        contexts = [f for f in frames if not f.standalone and f.informative and f.from_call_site]
        values = [f.values[node] for f in contexts]
        if len(contexts) < 2 or any(v.__class__ is not Tensor for v in values):
            return None
        names = self.context_names(frames[0].node)
        if names is None:
            return None
        standalone = [f.values[node] for f in frames if f.standalone]
        alone = join_all(standalone) if standalone else None
        named = names.tensor(contexts, values, alone if isinstance(alone, Tensor) else None)
        return _fill_in(named, alone) if named is not None else None

    def context_names(self, function: ast.AST) -> ContextNames | None:
        """The names of the sizes that differ between `function`'s call contexts (None when
        some call of it was not recorded on its own)."""
        if function in self._context_names:
            return self._context_names[function]
        names = None
        if function not in self.engine.overflowed:
            frames = [f for f in self.engine.frames_by_function.get(function, []) if f.scope.is_main]
            contexts = [f for f in frames if not f.standalone and f.informative and f.from_call_site]
            if len(contexts) >= 2:
                names = ContextNames(contexts, [f for f in frames if f.standalone])
        self._context_names[function] = names
        return names

    def tensor_at(self, node: ast.AST) -> Tensor | None:
        """The tensor an expression evaluates to, when its shape is at least partly known."""
        value = self.value_of(node)
        return value if isinstance(value, Tensor) and value.has_shape else None

    def symbolic_tensor_at(self, node: ast.AST) -> Tensor | None:
        """Like `tensor_at`, but from the function's own (symbolic) run first: `[B, T, C]`
        rather than one call site's `[8, 16, 32]` (rules asking *which* dim is the batch)."""
        for value in self._symbolic_first(node):
            if isinstance(value, Tensor) and value.has_shape:
                return value
        return None

    def symbolic_size_at(self, node: ast.AST) -> Dim | None:
        """The size an int expression holds (`B`, `self.heads`), from the function's own
        (symbolic) run first, as `symbolic_tensor_at`; None when unknown."""
        for value in self._symbolic_first(node):
            return value.dim if isinstance(value, (Int, Opaque)) else None
        return None

    def _symbolic_first(self, node: ast.AST) -> Iterator[Value]:
        """What is known of `node`: in the function's own (standalone) runs, then in runs
        reached from another method's symbolic run, then from real call sites; one joined
        value per kind of run."""
        frames = self._frames_by_node.get(node) or []
        for group in ([f for f in frames if f.standalone],
                      [f for f in frames if not f.standalone and not f.from_call_site],
                      [f for f in frames if not f.standalone and f.from_call_site]):
            if group:
                yield join_all(f.values[node] for f in group)

    # -- bindings ------------------------------------------------------------------------
    @cached_property
    def bindings(self) -> list[ShapeBinding]:
        """Every tensor-valued name binding of the file with some shape known, in source order."""
        found = []
        for node in self._frames_by_node:
            kind = self._binding_kind(node)
            if kind is None:
                continue
            value = self.value_of(node)
            if not isinstance(value, Tensor) or not value.has_shape:
                continue
            name = node.id if isinstance(node, ast.Name) else node.arg
            end = node.col_offset + len(name.encode("utf-8"))
            found.append(ShapeBinding(node.lineno, node.col_offset, end, name, kind, value))
        found.sort(key=lambda b: (b.line, b.col))
        return found

    def _binding_kind(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.arg):
            return "param" if node.arg not in ("self", "cls") else None
        if not isinstance(node, ast.Name) or not isinstance(node.ctx, ast.Store):
            return None
        parent = self.analysis.parents.get(node)
        while isinstance(parent, (ast.Tuple, ast.List, ast.Starred)):
            parent = self.analysis.parents.get(parent)
        if isinstance(parent, (ast.For, ast.AsyncFor)):
            return "for"
        if isinstance(parent, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
            target_is_tuple = isinstance(parent, ast.Assign) and any(isinstance(t, (ast.Tuple, ast.List))
                                                                     for t in parent.targets)
            return "unpack" if target_is_tuple else "assign"
        if isinstance(parent, (ast.With, ast.AsyncWith, ast.withitem)):
            return "assign"
        return None

    def binding_at(self, line: int, col: int) -> ShapeBinding | None:
        """The tensor binding whose name starts at this `ast` position, if any."""
        return next((b for b in self.bindings if b.line == line and b.col == col), None)

    def class_named_at(self, line: int, col: int) -> str | None:
        """The name of the class of this file whose `class` statement is at this position."""
        for name, node in self.analysis.classes.items():
            if node.lineno == line and node.col_offset <= col:
                return name
        return None

    def binding_after(self, line: int, end_col: int) -> ShapeBinding | None:
        """The tensor binding whose name ends at this `ast` position (where its hint sits)."""
        return next((b for b in self.bindings if b.line == line and b.end_col == end_col), None)

    def inlay_hints(self) -> list[InlayHint]:
        """`: [B, nh, T, hs]` after assignment and `for` targets that hold tensors."""
        hints = []
        for binding in self.bindings:
            if binding.kind == "param":
                continue
            hints.append(InlayHint(binding.line, binding.end_col, ": " + binding.tensor.render(), binding.origin))
        return hints

    # -- mismatches ----------------------------------------------------------------------
    @cached_property
    def mismatches(self) -> list[ShapeMismatch]:
        seen: set[tuple[int, int, str]] = set()
        found = []
        for mismatch in self.engine.mismatches:
            located = self._locate(mismatch.frame, mismatch.node)
            if located is None:
                continue
            node, prefix = located
            key = (node.lineno, node.col_offset, mismatch.kind)
            if key in seen:
                continue
            seen.add(key)
            message = prefix + mismatch.message
            suffix = _context_suffix(mismatch.frame) if not prefix else ""
            raised_in = self._raised_elsewhere(mismatch, node) if prefix else None
            found.append(ShapeMismatch(node.lineno, node.col_offset, node.end_lineno or node.lineno,
                                       node.end_col_offset or node.col_offset, _sentence(message + suffix),
                                       mismatch.kind, raised_in))
        found.sort(key=lambda m: (m.line, m.col))
        return found

    def _locate(self, frame: Frame, node: ast.AST) -> tuple[ast.AST, str] | None:
        """The node in this file to report at: the node itself, or the call in this file that
        led into another file's code."""
        if frame.scope.is_main:
            return node, ""
        current = frame
        where = f"in `{_function_name(frame)}` ({frame.scope.analysis.path}, line {node.lineno}): "
        for _ in range(32):
            if current.caller is None:
                return None
            caller, site = current.caller
            if caller is None or site is None:
                return None
            if caller.scope.is_main:
                return site, where
            current = caller
        return None

    def _raised_elsewhere(self, mismatch, call: ast.AST) -> RaisedElsewhere:
        """The mismatch at the line of the other file that raises, naming this file's call."""
        node = mismatch.node
        there = mismatch.frame.scope.analysis
        caller = os.path.basename(self.analysis.path)
        message = _sentence(f"{mismatch.message}, with the arguments of the call in {caller}, line {call.lineno}")
        return RaisedElsewhere(there.path, there.lines, node.lineno, node.col_offset, node.end_lineno or node.lineno,
                               node.end_col_offset if node.end_col_offset is not None else node.col_offset, message)

    # -- hover ---------------------------------------------------------------------------
    @cached_property
    def _positions(self) -> dict[int, list[ast.AST]]:
        table: dict[int, list[ast.AST]] = {}
        for node in self._frames_by_node:
            if isinstance(node, ast.arg) or getattr(node, "end_lineno", None) == node.lineno:
                table.setdefault(node.lineno, []).append(node)
        for cls in self.analysis.classes.values():
            table.setdefault(cls.lineno, []).append(cls)
        for info in self.analysis.functions:
            if not info.is_module:
                table.setdefault(info.node.lineno, []).append(info.node)
        return table

    def hover(self, line: int, col: int) -> Hover | None:
        """Markdown for the position (1-based line, UTF-8 byte column), or None."""
        best: tuple[int, ast.AST, int, int] | None = None
        for node in self._positions.get(line, ()):
            start, end = _name_span(node, self.analysis)
            if start <= col <= end and (best is None or end - start < best[0]):
                best = (end - start, node, start, end)
        if best is None:
            return None
        _, node, start, end = best
        if isinstance(node, ast.ClassDef):
            text = self.class_summary(node.name)
        elif isinstance(node, FunctionNodes):
            text = self._function_hover(node)
        else:
            text = self._value_hover(node)
        if not text:
            return None
        return Hover(line, start, line, end, text)

    def _value_hover(self, node: ast.AST) -> str | None:
        value = self.value_of(node)
        if value is None:
            return None
        label = _node_label(node, self.analysis)
        if isinstance(value, Tensor):
            if not value.has_shape:
                return None
            return f"```python\n{label}: Tensor{value.render()}\n```" + _origin_line(value) + self._symbol_lines(
                node, value)
        if isinstance(value, TupleValue) and any(isinstance(v, Tensor) for v in value.items):
            return f"```python\n{label}: {render_value(value)}\n```"
        if isinstance(value, (Layer, Instance)):
            return self._module_hover(node, label, value)
        if isinstance(value, Int) and value.dim is not None:
            return f"```python\n{label}: int = {value.dim.render()}\n```"
        if isinstance(value, ListValue) and value.kind == "ModuleList":
            return f"```python\n{label}: ModuleList[{_module_name(value.element)}]\n```"
        return None

    def _symbol_lines(self, node: ast.AST, tensor: Tensor) -> str:
        """Where each symbol of the shape comes from; for unknown dims, the statement of the
        shape that would name them."""
        frames = self._frames_by_node.get(node) or []
        names = self.context_names(frames[0].node) if frames else None
        lines = symbol_origins(self.analysis, node, tensor, names)
        suggestion = self.suggested_shape(node)
        if suggestion is not None:
            what = "annotate it" if suggestion.kind == "annotation" else "state it in a comment"
            code = f"{_node_label(node, self.analysis)}{suggestion.text}" if suggestion.kind == "annotation" \
                else suggestion.text.strip()
            lines.append(f"Nothing names the `?` sizes: {what}, `{code}`")
        return "".join(f"\n\n{line}" for line in lines)

    def suggested_shape(self, node: ast.AST) -> SuggestedShape | None:
        """The annotation or shape comment that would name the unknown sizes bound at `node`."""
        value = self.value_of(node)
        return suggested_shape(self.analysis, node, value) if isinstance(value, Tensor) else None

    def binding_node_at(self, line: int, col: int) -> ast.AST | None:
        """The parameter or assigned name at this position whose tensor has a shape."""
        for node in self._positions.get(line, ()):
            if isinstance(node, (ast.arg, ast.Name)):
                start, end = _name_span(node, self.analysis)
                if start <= col <= end:
                    return node
        return None

    def _module_hover(self, node: ast.AST, label: str, module: Value) -> str:
        lines = [f"```python\n{label}: {_module_name(module)}\n```"]
        call = self.analysis.parents.get(node)
        if isinstance(call, ast.Call) and call.func is node and call.args:
            given, result = self.value_of(call.args[0]), self.value_of(call)
            if given is not None and result is not None and (isinstance(given, Tensor) or isinstance(result, Tensor)):
                lines.append(f"{render_value(given)} → {render_value(result)}")
        count = module_parameters(module)
        if count is not None:
            lines.append(f"parameters: {_count(count)}")
        elif isinstance(module, Instance):
            reason = unknown_parameters_reason(module)
            lines.append(f"parameters: unknown{': ' + reason if reason else ''}")
        return "\n\n".join(lines)

    def _function_hover(self, node: ast.AST) -> str | None:
        parts = []
        for arg in node.args.posonlyargs + node.args.args + node.args.kwonlyargs:
            if arg.arg in ("self", "cls"):
                continue
            value = self.value_of(arg)
            parts.append(f"{arg.arg}: Tensor{value.render()}" if isinstance(value, Tensor) and value.has_shape
                         else arg.arg)
        frames = [f for f in self.engine.frames_by_function.get(node, []) if f.scope.is_main]
        result = choose(frames, lambda f: f.result) if frames else None
        returns = f" -> {render_value(result)}" if result is not None and _shows(result) else ""
        if not any(":" in p for p in parts) and not returns:
            return None
        return f"```python\ndef {node.name}({', '.join(parts)}){returns}\n```"

    # -- module summaries ------------------------------------------------------------------
    def class_summary(self, name: str) -> str | None:
        """A torchinfo-like table for an `nn.Module` subclass of this file, computed statically."""
        cls = self.analysis.classes.get(name)
        if cls is None:
            return None
        frame = self._summary_frame(cls)
        if frame is None:
            return None
        rows = [("Layer (type)", "Output shape", "Param #")]
        for call, depth in _ordered_calls(list(frame.module_calls.values())):
            label = call.label.split(".", 1)[1] if call.label.startswith(("self.", f"{frame.self_name}.")) else call.label
            count = module_parameters(call.module)
            rows.append(("  " * depth + f"{label} ({_module_name(call.module)})", render_value(call.output),
                         _count(count) if count is not None else "?"))
        inputs = [v for k, v in frame.params.items()]
        total = module_parameters(frame.self_value) if frame.self_value is not None else None
        header = f"{name}: {', '.join(render_value(v) for v in inputs if isinstance(v, Tensor))} → {render_value(frame.result)}"
        table = _table(rows)
        footer = f"Total params: {_count(total) if total is not None else '?'}"
        reason = unknown_parameters_reason(frame.self_value) if total is None else None
        if reason:
            footer += f" ({reason})"
        return f"```text\n{header}\n{table}\n{footer}\n```\nstatic estimate: shapes from the code, nothing was run"

    def _summary_frame(self, cls: ast.ClassDef) -> Frame | None:
        forward = next((s for s in cls.body if isinstance(s, FunctionNodes) and s.name == "forward"), None)
        if forward is None:
            return None
        frames = [f for f in self.engine.frames_by_function.get(forward, []) if f.scope.is_main]
        informative = [f for f in frames if not f.standalone and f.informative]
        if informative:
            return max(informative, key=lambda f: sum(information(v) for v in f.params.values()))
        standalone = [f for f in frames if f.standalone]
        return standalone[0] if standalone else None


# ============================================================================ helpers
def choose(frames: list[Frame], value_in) -> Value | None:
    """The value to show for a node several frames recorded.

    The call sites' value (frames reached from module-level code or plain functions)
    where they agree and say more than the standalone run; else the value the
    function gets from other modules' symbolic runs, if that says more; else the
    standalone (symbolic) value."""
    standalone = [value_in(f) for f in frames if f.standalone]
    alone = join_all(standalone) if standalone else None
    for from_sites in (True, False):
        derived = [value_in(f) for f in frames
                   if not f.standalone and f.informative and f.from_call_site == from_sites]
        if not derived:
            continue
        called = join_all(derived)
        if alone is None or information(called) > information(alone):
            return _fill_in(called, alone)
    return alone


def _fill_in(called: Value, alone: Value | None) -> Value:
    """Sizes the call sites disagree on, taken from the standalone (symbolic) run: the call
    sites give `[4, ?, ?]`, the function itself says `[*, n_embd]`: `[4, ?, n_embd]`."""
    if not isinstance(called, Tensor) or not isinstance(alone, Tensor) or called.rank is None:
        return called
    if alone.rank is not None and alone.rank != called.rank or len(alone.dims) > called.rank:
        return called
    offset = called.rank - len(alone.dims)
    dims = tuple(own if own is not None or index < offset else alone.dims[index - offset]
                 for index, own in enumerate(called.dims))
    return Tensor(dims, False, called.dtype, called.origin)


def render_value(value: Value | None) -> str:
    if value is None:
        return "?"
    if isinstance(value, Tensor):
        return value.render() if value.has_shape else "Tensor"
    if isinstance(value, TupleValue):
        return "(" + ", ".join(render_value(v) for v in value.items) + ")"
    if isinstance(value, Int):
        return "int" if value.dim is None else value.dim.render()
    return "?"


def _shows(value: Value) -> bool:
    if isinstance(value, Tensor):
        return value.has_shape
    if isinstance(value, TupleValue):
        return any(_shows(v) for v in value.items)
    return False


def _origin_line(value: Tensor) -> str:
    return f"\n{value.origin.describe()}" if value.origin is not None else ""


def _module_name(module: Value) -> str:
    if isinstance(module, Layer):
        return module.kind.describe(module)
    if isinstance(module, Instance):
        return module.cls.name
    if isinstance(module, ListValue):
        return "ModuleList"
    return "?"


def _count(count: Dim) -> str:
    value = count.as_int()
    if value is None:
        return count.render()
    return f"{value:,}"


def _table(rows: list[tuple[str, str, str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = []
    for index, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())
        if index == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _ordered_calls(calls: list[ModuleCall]) -> list[tuple[ModuleCall, int]]:
    """Calls in order, each container before the layers it called (indented under it)."""
    out: list[tuple[ModuleCall, int]] = []
    for call in calls:
        children = [entry for entry in out if entry[0].label.startswith(call.label + ".")]
        out = [entry for entry in out if entry not in children]
        out.append((call, 0))
        out.extend((child, depth + 1) for child, depth in children)
    expanded: list[tuple[ModuleCall, int]] = []
    for call, depth in out:
        expanded.append((call, depth))
        if call.frame is not None and isinstance(call.module, Instance) and depth < 6:
            nested = _ordered_calls(list(call.frame.module_calls.values()))
            prefix = _strip_self(call.label)
            for inner, inner_depth in nested:
                renamed = ModuleCall(prefix + "." + _strip_self(inner.label), inner.module, inner.output, inner.frame)
                expanded.append((renamed, depth + 1 + inner_depth))
    return expanded


def _strip_self(label: str) -> str:
    return label[5:] if label.startswith("self.") else label


def _name_span(node: ast.AST, analysis: "Analysis") -> tuple[int, int]:
    if isinstance(node, ast.arg):
        return node.col_offset, node.col_offset + len(node.arg.encode("utf-8"))
    if isinstance(node, (ast.ClassDef, *FunctionNodes)):
        text = analysis.lines.line_text(node.lineno)
        keyword = "class " if isinstance(node, ast.ClassDef) else "def "
        start = text.encode("utf-8").find((keyword + node.name).encode("utf-8"))
        if start < 0:
            return -1, -1
        start += len(keyword)
        return start, start + len(node.name.encode("utf-8"))
    if isinstance(node, ast.Attribute):
        end = node.end_col_offset
        return end - len(node.attr.encode("utf-8")), end
    return node.col_offset, node.end_col_offset


def _node_label(node: ast.AST, analysis: "Analysis") -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.arg):
        return node.arg
    text = analysis.lines.line_text(node.lineno).encode("utf-8")[node.col_offset:node.end_col_offset]
    label = " ".join(text.decode("utf-8", errors="ignore").split())
    return label if len(label) <= 60 else label[:57] + "..."


def _function_name(frame: Frame) -> str:
    node = frame.node
    name = getattr(node, "name", "<module>")
    return f"{frame.owner.name}.{name}" if frame.owner is not None else name


def _context_suffix(frame: Frame) -> str:
    if frame.standalone or frame.caller is None:
        return ""
    caller, site = frame.caller
    if site is None:
        return ""
    return f", with the arguments of the call on line {site.lineno}"


def _sentence(message: str) -> str:
    message = message.rstrip()
    return message if message.endswith(".") else message + "; this raises at run time."

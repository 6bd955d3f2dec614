"""Shapes the code states in words: comments, jaxtyping annotations, docstrings.

People already write shapes down: `x = self.proj(x)  # (B, T, C)`, `# q: [B, nh, T, hs]`
on the line above, `# shape: (N, D)`, `x: Float[Tensor, "b c h w"]`, and docstrings
such as `x (Tensor): shape (B, T, C)`.  These are claims, not proofs: the interpreter
uses them only where inference knows less (see `merge_stated`).
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import lru_cache

from torch_lsp import memos
from torch_lsp.shapes.dims import Dim, parse_dim
from torch_lsp.shapes.values import Origin, Tensor

_BRACKETED = re.compile(r"[\[(]([^\[\]()]*(?:\([^\[\]()]*\)[^\[\]()]*)*)[\])]")
_SEPARATOR = re.compile(r"\s*,\s*|\s+x\s+|\s*×\s*")
_BARE_PREFIX = re.compile(r"#+\s*(?:(?:shape|size|out|output|->)\s*[:=]?\s*)?(?=[\[(])", re.IGNORECASE)
_SHAPE_WORD = re.compile(r"\bshape\b\s*[:=]?\s*(?:of\s*)?(?=[\[(])", re.IGNORECASE)
_JAXTYPING_DTYPES = {
    "Float": "float", "Float16": "float", "Float32": "float", "Float64": "float", "BFloat16": "float",
    "Int": "long", "Int8": "long", "Int16": "long", "Int32": "long", "Int64": "long", "Integer": "long",
    "Bool": "bool", "Shaped": None, "Num": None, "Real": None, "Inexact": "float", "UInt8": None,
}
MAX_IDENTIFIER = 24


@dataclass(frozen=True)
class StatedShape:
    dims: tuple[Dim | None, ...]
    variadic: bool
    dtype: str | None
    origin: Origin

    def tensor(self) -> Tensor:
        return Tensor(self.dims, self.variadic, self.dtype, self.origin, claimed=True)


# ----------------------------------------------------------------- dim lists
def parse_dim_list(inner: str, *, strict: bool) -> tuple[tuple[Dim | None, ...], bool] | None:
    """`B, T, 3*C` -> dims; `*, C` / `..., C` give a variadic prefix.  `strict` refuses
    lists that may be prose (`(see above)`): one item without a trailing comma."""
    stripped = inner.strip()
    if not stripped:
        return None
    trailing_comma = stripped.endswith(",")
    parts = [p.strip() for p in _SEPARATOR.split(stripped.rstrip(",")) if p.strip()]
    if strict and len(parts) < 2 and not trailing_comma:
        return None
    variadic = False
    dims: list[Dim | None] = []
    for index, part in enumerate(parts):
        if part in ("...", "*") or (part.startswith("*") and part[1:].isidentifier()):
            if index != 0:
                return None
            variadic = True
            continue
        if part in ("?", "_") or (part.startswith("_") and part[1:].isidentifier()):
            dims.append(None)
            continue
        if part.isidentifier() and len(part) > MAX_IDENTIFIER:
            return None
        dim = parse_dim(part, slash_is_floordiv=True)
        if dim is None or (dim.as_int() is not None and dim.as_int() <= 0):
            return None  # `[0]`, `[-1]`: an index or a value in prose, not a shape
        dims.append(dim)
    if not dims and not variadic:
        return None
    return tuple(dims), variadic


def _after_arrow(comment: str) -> str:
    return comment.rsplit("->", 1)[1] if "->" in comment else comment


# ------------------------------------------------------------------ comments
def trailing_comment(line_text: str, end_byte: int) -> str | None:
    """The `# ...` after a statement that ends at `end_byte` on this line."""
    rest = line_text.encode("utf-8")[end_byte:].decode("utf-8", errors="ignore").strip()
    return rest if rest.startswith("#") else None


@lru_cache(maxsize=512)
def _named_pattern(name: str, strict: bool) -> re.Pattern:
    # `x: (B, T)`, `x shape (B, T)`, `x is (B, T)`, and (not strict) `x (B, T)`; never `x[0]` or
    # `x(...)` (code in a comment) nor `x = [1, 2]` (a value).
    separators = r"\s*:\s*(?:shape\s*[:=]?\s*)?|\s+shape\s*[:=]?\s*|\s+is\s+(?:of\s+shape\s*)?"
    if not strict:
        separators += r"|\s+"
    return re.compile(rf"(?<![\w.]){re.escape(name)}(?:{separators})(?=[\[(])")


@lru_cache(maxsize=512)
def _docstring_pattern(name: str) -> re.Pattern:
    return re.compile(rf"^\s*{re.escape(name)}\b(?:\s*\(([^)]*)\))?\s*:\s*(.*)$")


memos.register(_named_pattern.cache_clear, _docstring_pattern.cache_clear)


def named_shape(comment: str, name: str, strict: bool = False) -> tuple[tuple[Dim | None, ...], bool] | None:
    """`# q: [B, nh, T, hs]`, `# q shape (B, T)`, `# q is (B, T)`; `# q (B, T)` unless `strict`."""
    if name not in comment:
        return None  # the usual case, answered without building the name's pattern
    match = _named_pattern(name, strict).search(comment)
    if not match:
        return None
    bracket = _BRACKETED.match(comment, match.end())
    return parse_dim_list(bracket.group(1), strict=False) if bracket else None


def bare_shape(comment: str, whole_line: bool) -> tuple[tuple[Dim | None, ...], bool] | None:
    """`# (B, T, C)`, `# [B, T, C]`, `# shape: (N, D)`, `# -> (B, C, T)` (the part after the arrow)."""
    text = comment.strip()
    if "->" in text:
        text = "# " + _after_arrow(text).strip()
    prefix = _BARE_PREFIX.match(text)
    if not prefix:
        return None
    bracket = _BRACKETED.match(text, prefix.end())
    if not bracket:
        return None
    if whole_line and text[bracket.end():].strip():
        return None
    return parse_dim_list(bracket.group(1), strict=True)


def comment_shape(lines, stmt: ast.stmt, target: str) -> StatedShape | None:
    """The shape a comment states for `target` bound by `stmt`: on its last line (trailing),
    or on the line just above (a full-line comment naming the target or holding only a shape)."""
    commented = _commented_lines(lines)
    if stmt.end_lineno not in commented and stmt.lineno - 1 not in commented:
        return None
    text = lines.line_text(stmt.end_lineno)
    above = lines.line_text(stmt.lineno - 1)
    comment = trailing_comment(text, stmt.end_col_offset) if "#" in text else None
    if comment:
        found = named_shape(_after_arrow(comment), target) or bare_shape(comment, whole_line=False)
        if found:
            return _stated(found, None, f"the comment `{_short(comment)}`", stmt.end_lineno)
    above = above.strip()
    if above.startswith("#"):
        found = named_shape(_after_arrow(above), target) or bare_shape(above, whole_line=True)
        if found:
            return _stated(found, None, f"the comment `{_short(above)}`", stmt.lineno - 1)
    return None


def _commented_lines(lines) -> set[int]:
    """Lines holding a `#` (1-based), computed once per document version."""
    found = getattr(lines, "_commented_lines", None)
    if found is None:
        found = {index + 1 for index, text in enumerate(lines.lines) if "#" in text}
        lines._commented_lines = found
    return found


def _stated(found, dtype, text: str, line: int) -> StatedShape:
    dims, variadic = found
    return StatedShape(dims, variadic, dtype, Origin(text, line))


def _short(comment: str, limit: int = 40) -> str:
    comment = " ".join(comment.split())
    return comment if len(comment) <= limit else comment[: limit - 3] + "..."


# ---------------------------------------------------------------- parameters
def parameter_shape(lines, function: ast.AST, name: str) -> StatedShape | None:
    """What the function's header comments or docstring state about parameter `name`."""
    node = function
    header_end = node.body[0].lineno if node.body else node.lineno
    commented = _commented_lines(lines)
    for line in range(node.lineno, header_end):
        if line not in commented:  # most header lines: no need to fetch the text
            continue
        text = lines.line_text(line)
        comment = text[text.index("#"):]
        found = named_shape(comment, name, strict=True)
        if found:
            return _stated(found, None, f"the comment `{_short(comment)}`", line)
    doc = _docstring(node)
    if doc is not None and name in doc.value:
        return _docstring_shape(doc, name)
    return None


def _docstring(node: ast.AST) -> ast.Constant | None:
    if node.body and isinstance(node.body[0], ast.Expr):
        value = node.body[0].value
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            return value
    return None


# A documented type that may be something other than a tensor: `(tuple/Tensor)`, `(int or list)`.
_NOT_ONLY_A_TENSOR = re.compile(r"\b(?:tuple|list|int|float|str|dict|sequence|iterable)\b", re.IGNORECASE)


def _docstring_shape(doc: ast.Constant, name: str) -> StatedShape | None:
    pattern = _docstring_pattern(name)
    for offset, line in enumerate(doc.value.splitlines()):
        match = pattern.match(line)
        if not match:
            continue
        kind, rest = match.group(1) or "", match.group(2)
        shape_word = _SHAPE_WORD.search(rest)
        start = shape_word.end() if shape_word else 0
        if not shape_word and not rest.lstrip().startswith(("(", "[")):
            continue
        if not shape_word and _NOT_ONLY_A_TENSOR.search(kind):
            continue  # `img (tuple/Tensor): (height, width) of image`: the tuple's values, not a shape
        bracket = _BRACKETED.search(rest, start)
        if bracket:
            found = parse_dim_list(bracket.group(1), strict=not shape_word)
            if found:
                return _stated(found, None, f"the docstring of `{name}`", doc.lineno + offset)
    return None


# --------------------------------------------------------------- annotations
def annotation_shape(annotation: ast.AST | None, line: int) -> StatedShape | None:
    """jaxtyping `Float[Tensor, "b c h w"]` and torchtyping `TensorType["b", "c"]`."""
    if not isinstance(annotation, ast.Subscript):
        return None
    head = annotation.value
    head_name = head.attr if isinstance(head, ast.Attribute) else head.id if isinstance(head, ast.Name) else None
    items = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
    if head_name in _JAXTYPING_DTYPES and len(items) == 2 and _is_str(items[1]):
        parsed = _jaxtyping_dims(items[1].value)
        if parsed is None:
            return None
        text = f'the annotation `{head_name}[..., "{items[1].value}"]`'
        return _stated(parsed, _JAXTYPING_DTYPES[head_name], text, line)
    if head_name == "TensorType" and items and all(_is_str(i) for i in items):
        parsed = parse_dim_list(", ".join(i.value for i in items), strict=False)
        if parsed is None:
            return None
        return _stated(parsed, None, "the `TensorType` annotation", line)
    return None


def _jaxtyping_dims(spec: str) -> tuple[tuple[Dim | None, ...], bool] | None:
    tokens = spec.split()
    variadic = False
    dims: list[Dim | None] = []
    for index, token in enumerate(tokens):
        token = token.lstrip("#")
        if token == "..." or token.startswith("*"):
            if index != 0:
                return None
            variadic = True
            continue
        if token == "_" or token.startswith("_"):
            dims.append(None)
            continue
        if "=" in token:
            token = token.split("=", 1)[0]
        dim = parse_dim(token)
        if dim is None:
            return None
        dims.append(dim)
    return tuple(dims), variadic


def _is_str(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


# ---------------------------------------------------------------- merging
def merge_stated(inferred: Tensor | None, stated: StatedShape) -> Tensor:
    """Inference wins where it knows a size; the statement fills in what it does not."""
    claim = stated.tensor()
    if inferred is None or not inferred.has_shape:
        return claim
    if inferred.rank is not None:
        if claim.rank is not None and claim.rank != inferred.rank:
            return inferred
        if claim.rank is None and len(claim.dims) > inferred.rank:
            return inferred
        offset = inferred.rank - len(claim.dims)
        dims = []
        for index, own in enumerate(inferred.dims):
            told = claim.dims[index - offset] if index >= offset else None
            dims.append(own if own is not None else told)
        filled = any(d is None for d in inferred.dims)
        return Tensor(tuple(dims), False, inferred.dtype or claim.dtype,
                      claim.origin if filled else inferred.origin, inferred.claimed or filled)
    # Inference knows only trailing sizes: take the statement where it agrees with them.
    if len(claim.dims) < len(inferred.dims):
        return inferred
    tail = claim.dims[len(claim.dims) - len(inferred.dims):]
    for own, told in zip(inferred.dims, tail):
        if own is not None and told is not None and own != told and own.is_int and told.is_int:
            return inferred
    merged = claim.dims[: len(claim.dims) - len(inferred.dims)] + tuple(
        own if own is not None else told for own, told in zip(inferred.dims, tail))
    return Tensor(merged, claim.variadic, inferred.dtype or claim.dtype, claim.origin, True)

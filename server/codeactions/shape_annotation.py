""""Name the sizes of `x`": insert the shape statement hover suggests where sizes are unknown.

On a parameter: a jaxtyping annotation (`x: Float[Tensor, "B 784"]`), with
`from jaxtyping import Float` and `from torch import Tensor` added when those names are
not bound at module level.  On an assignment: a shape comment at the end of its line
(`# [B, 784]`).  What to insert comes from the shape pass (`ShapeReport.suggested_shape`);
this module only turns it into edits.
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from torch_lsp.codeactions.action import Action
from torch_lsp.codeactions.edits import TextEdit
from torch_lsp.codeactions.imports import import_anchor

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.shapes import ShapeReport

REFACTOR = "refactor.rewrite"
# What the annotation uses: (module, name).
ANNOTATION_IMPORTS = (("jaxtyping", "Float"), ("torch", "Tensor"))


def name_sizes_action(analysis: "Analysis", report: "ShapeReport", line: int, byte_col: int) -> Action | None:
    """The action for the tensor binding at this `ast` position, or None when it has no unknown size."""
    node = report.binding_node_at(line, byte_col)
    if node is None:
        return None
    suggestion = report.suggested_shape(node)
    if suggestion is None:
        return None
    lines = analysis.lines
    at = lines.offset_of_ast(suggestion.line, suggestion.col)
    edits = [TextEdit(at, at, suggestion.text)]
    if suggestion.kind == "annotation":
        edits = _imports(analysis) + edits
    name = node.arg if isinstance(node, ast.arg) else node.id
    title = f"Name the sizes of `{name}`: {suggestion.text.strip(': #').strip()}"
    return Action(title, REFACTOR, tuple(edits), "")


def _imports(analysis: "Analysis") -> list[TextEdit]:
    bound = _module_level_names(analysis.tree)
    missing = [(module, name) for module, name in ANNOTATION_IMPORTS if name not in bound]
    if not missing:
        return []
    anchor, where = import_anchor(analysis)
    text = "".join(f"from {module} import {name}\n" for module, name in missing)
    if anchor is None:
        return [TextEdit(0, 0, text)]
    at = analysis.lines.line_start(anchor.lineno if where == "before" else anchor.end_lineno + 1)
    return [TextEdit(at, at, text)]


def _module_level_names(tree: ast.Module) -> set[str]:
    names = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom):
            names |= {alias.asname or alias.name for alias in stmt.names}
    return names

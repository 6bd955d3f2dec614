"""How TL2xx messages quote code: the short source text of a node."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis


def node_text(analysis: "Analysis", node: ast.AST) -> str:
    """The source of a node on one line, whitespace collapsed and comments dropped.

    Read through the document's `LineIndex` (`ast.get_source_segment` re-splits the whole
    file on every call, which is far too slow for messages)."""
    line, end_line = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
    if line is None or end_line is None:
        return ast.unparse(node)
    if line != end_line:
        return " ".join(ast.unparse(node).split())
    raw = analysis.lines.line_text(line).encode("utf-8")[node.col_offset: node.end_col_offset]
    return " ".join(raw.decode("utf-8", errors="replace").split())


def source_of(analysis: "Analysis", node: ast.AST, limit: int = 60) -> str:
    """Short source text of a node for a message: `F.softmax(scores)`, `criterion(...)`."""
    text = node_text(analysis, node)
    if len(text) <= limit:
        return text
    if isinstance(node, ast.Call):
        return source_of(analysis, node.func, limit) + "(...)"
    return text[: limit - 3] + "..."

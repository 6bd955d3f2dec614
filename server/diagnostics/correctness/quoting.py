"""How TL2xx messages quote code: the short source text of a node."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from torch_lsp.syntax_nodes import node_text

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis


def source_of(analysis: "Analysis", node: ast.AST, limit: int = 60) -> str:
    """Short source text of a node for a message: `F.softmax(scores)`, `criterion(...)`."""
    text = node_text(analysis.lines, node)
    if len(text) <= limit:
        return text
    if isinstance(node, ast.Call):
        return source_of(analysis, node.func, limit) + "(...)"
    return text[: limit - 3] + "..."

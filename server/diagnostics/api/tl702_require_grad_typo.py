"""TL702 require-grad-typo: `x.require_grad = ...`, which sets a new attribute instead of
`requires_grad`."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator

from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import Finding, Rule
from torch_lsp.fact_cache import FactKey
from torch_lsp.syntax_index import statement_nodes
from torch_lsp.syntax_nodes import node_text

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis

TYPO = "require_grad"


_TYPO_USES: FactKey[tuple[list[ast.Attribute], bool]] = FactKey("tl702.typo_uses")


def typo_targets(analysis: "Analysis") -> list[ast.Attribute]:
    """`<x>.require_grad` assigned to, in a file that never reads a `.require_grad` of its own
    (a file that reads it has an attribute of that name on purpose)."""
    uses = analysis.statement_facts.each(_TYPO_USES, lambda statement: _typo_uses(statement_nodes(analysis, statement)))
    if any(read for _, read in uses):
        return []
    return sorted((target for targets, _ in uses for target in targets), key=lambda n: (n.lineno, n.col_offset))


def _typo_uses(nodes: dict[type, list[ast.AST]]) -> tuple[list[ast.Attribute], bool]:
    """(the `.require_grad` assigned to in a top-level statement, whether it reads one), from
    its nodes by type (`statement_nodes`)."""
    targets, read = [], False
    for node in nodes.get(ast.Attribute, ()):
        if node.attr == TYPO:
            if isinstance(node.ctx, ast.Store):
                targets.append(node)
            else:
                read = True
    return targets, read


@register
class RequireGradTypo(Rule):
    """## What it does
    Flags assignments to `.require_grad` (without the `s`), unless the file also reads an
    attribute of that name (then it is its own attribute, on purpose).

    ## Why is this bad
    Python sets a new, unused attribute and raises nothing: the tensor or parameter keeps
    its old `requires_grad`, so a layer meant to be frozen keeps training (or the other
    way round).

    ## Example
    ```python
    for p in backbone.parameters():
        p.require_grad = False
    ```

    ## Use instead
    ```python
    for p in backbone.parameters():
        p.requires_grad = False
    ```
    """

    code = "TL702"
    name = "require-grad-typo"
    severity = "error"
    fix_safety = "safe"

    def check(self, analysis: "Analysis") -> Iterator[Finding]:
        for target in typo_targets(analysis):
            owner = node_text(analysis.lines, target.value)
            yield self.finding(
                target,
                f"`{owner}.require_grad = ...` sets a new attribute that PyTorch never reads, so `{owner}` keeps its "
                f"`requires_grad`: write `{owner}.requires_grad`.",
                "Rename to `requires_grad`",
            )

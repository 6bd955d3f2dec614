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


_TYPO_USES: FactKey[tuple[list[ast.Attribute], list[ast.Attribute]]] = FactKey("tl702.typo_uses")
# How an argparse option spells the attribute `args.require_grad` it creates.
_OPTION_SPELLINGS = {TYPO, "--require_grad", "--require-grad"}


def typo_targets(analysis: "Analysis") -> list[ast.Attribute]:
    """`<x>.require_grad` assigned to, in a file that never reads a `.require_grad` of its own
    (a file that reads it has an attribute of that name on purpose). Reading the option of an
    argparse parser that declares it (`args.require_grad` after `add_argument("--require-grad")`)
    is not such an attribute: the parser made it."""
    uses = analysis.statement_facts.each(_TYPO_USES, lambda statement: _typo_uses(statement_nodes(analysis, statement)))
    targets = sorted((target for targets, _ in uses for target in targets), key=lambda n: (n.lineno, n.col_offset))
    reads = [read for _, reads in uses for read in reads]
    if reads and not _reads_only_a_parsed_option(analysis, reads, targets):
        return []
    return targets


def _reads_only_a_parsed_option(analysis: "Analysis", reads: list[ast.Attribute], targets: list[ast.Attribute]) -> bool:
    assigned_owners = {node_text(analysis.lines, t.value) for t in targets}
    if any(not isinstance(r.value, ast.Name) or r.value.id in assigned_owners for r in reads):
        return False
    return any(isinstance(a, ast.Constant) and a.value in _OPTION_SPELLINGS
               for call in analysis.iter_calls("add_argument")
               for a in (*call.args, *(k.value for k in call.keywords if k.arg == "dest")))


def _typo_uses(nodes: dict[type, list[ast.AST]]) -> tuple[list[ast.Attribute], list[ast.Attribute]]:
    """(the `.require_grad` assigned to in a top-level statement, those it reads), from its
    nodes by type (`statement_nodes`)."""
    targets, reads = [], []
    for node in nodes.get(ast.Attribute, ()):
        if node.attr == TYPO:
            (targets if isinstance(node.ctx, ast.Store) else reads).append(node)
    return targets, reads


@register
class RequireGradTypo(Rule):
    """## What it does
    Flags assignments to `.require_grad` (without the `s`), unless the file also reads an
    attribute of that name (then it is its own attribute, on purpose); reading an argparse
    option the file declares (`args.require_grad` after `add_argument("--require-grad")`)
    does not count.

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
    whole_file = True  # reads the options the file's argument parser defines anywhere

    def check(self, analysis: "Analysis") -> Iterator[Finding]:
        for target in typo_targets(analysis):
            owner = node_text(analysis.lines, target.value)
            yield self.finding(
                target,
                f"`{owner}.require_grad = ...` sets a new attribute that PyTorch never reads, so `{owner}` keeps its "
                f"`requires_grad`: write `{owner}.requires_grad`.",
                "Rename to `requires_grad`",
            )

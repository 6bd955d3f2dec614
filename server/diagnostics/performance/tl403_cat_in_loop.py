"""TL403 cat-in-loop: flags an accumulator grown with `torch.cat` / `torch.stack` inside a loop:
`acc = torch.cat([acc, x])`.
"""
from __future__ import annotations

import ast
from typing import Iterator

from torch_lsp.analysis import Analysis
from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import Finding, Rule


@register
class CatInLoop(Rule):
    """
    ## What it does
    Flags an accumulator grown with `torch.cat` / `torch.stack` inside a loop:
    `acc = torch.cat([acc, x])`, also written `acc = x if acc is None else torch.cat([acc, x])`
    (the fix does not rewrite that form).

    ## Why is this bad
    Every iteration copies everything gathered so far, so the loop costs quadratic time and
    churns memory; on the GPU it also fragments the allocator.

    ## Example
    ```python
    embeddings = torch.empty(0, dim)
    for batch in loader:
        embeddings = torch.cat([embeddings, encoder(batch)])
    ```

    ## Use instead
    ```python
    chunks = []
    for batch in loader:
        chunks.append(encoder(batch))
    embeddings = torch.cat(chunks)
    ```
    """

    code = "TL403"
    name = "cat-in-loop"
    severity = "warning"
    fix_safety = "unsafe"

    _JOINS = {"torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.vstack", "torch.hstack"}

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        for call in analysis.calls_to(*self._JOINS):
            if not analysis.context(call).loops:
                continue
            stmt = analysis.statement_of(call)
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
                continue
            if stmt.value is not call and not _first_time_or_join(stmt.value, call):
                continue  # (the fix declines the `x if acc is None else ...` form)
            target = stmt.targets[0]
            if not isinstance(target, ast.Name) or not call.args or not isinstance(call.args[0], (ast.List, ast.Tuple)):
                continue
            if not any(isinstance(e, ast.Name) and e.id == target.id for e in call.args[0].elts):
                continue
            if not self._pure_accumulator(analysis, stmt, target.id):
                continue
            join = ast.unparse(call.func)
            message = (
                f"`{target.id} = {join}([...{target.id}...])` copies everything gathered so far on every "
                f"iteration (quadratic time). Append the pieces to a list and call `{join}` once after the loop."
            )
            yield self.finding(call, message, f"Collect into a list and call `{join}` once after the loop",
                               data={"accumulator": target.id})


    def _pure_accumulator(self, analysis: Analysis, stmt: ast.stmt, name: str) -> bool:
        """Only grown here and not read elsewhere in the loop: `x = torch.cat((x, skip))` in a
        U-Net or `out = torch.cat((out, token))` in generation are not collect-then-use."""
        loop = analysis.context(stmt).loop
        if analysis.loop_rebinds(loop, name, besides=stmt):
            return False
        own = {id(n) for n in ast.walk(stmt)}
        for node in ast.walk(loop.node):
            if isinstance(node, ast.Name) and node.id == name and id(node) not in own:
                return False
        return True


def _first_time_or_join(value: ast.AST, call: ast.Call) -> bool:
    """`x if acc is None else torch.cat([acc, x])` (either way round): the first piece, then joins."""
    if not isinstance(value, ast.IfExp) or call not in (value.body, value.orelse):
        return False
    test = value.test
    return (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot))
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None)

"""TL403 cat-in-loop: flags an accumulator grown with `torch.cat` / `torch.stack` inside a loop:
`acc = torch.cat([acc, x])`.
"""
from __future__ import annotations

import ast
from typing import Iterator

from torch_lsp.analysis import Analysis
from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import Finding, Rule
from torch_lsp.syntax_nodes import walk_nodes


@register
class CatInLoop(Rule):
    """
    ## What it does
    Flags an accumulator grown with `torch.cat` / `torch.stack` inside a loop:
    `acc = torch.cat([acc, x])`, also written `acc = x if acc is None else torch.cat([acc, x])`
    (the fix does not rewrite that form). Not flagged when the loop reads the accumulator
    elsewhere, even inside the same statement (`x = torch.cat([x, layer(x)], 1)` in a DenseNet
    block, generation feeding the sequence back), nor in a loop known to be short: over
    `range(n)` with a literal `n` of at most 16, or over the rows of one tensor or of one
    batch (`for img in batch["A"]`, with `batch = next(iter(loader))`), such as a grid of
    sample images built once per logging interval.

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
            if not self._pure_accumulator(analysis, stmt, call, target.id):
                continue
            if _short_loop(analysis, analysis.context(stmt).loop):
                continue  # a handful of pieces: the copies cost nothing worth a rewrite
            join = ast.unparse(call.func)
            message = (
                f"`{target.id} = {join}([...{target.id}...])` copies everything gathered so far on every "
                f"iteration (quadratic time). Append the pieces to a list and call `{join}` once after the loop."
            )
            # The `x if acc is None else torch.cat(...)` form has no automatic fix.
            title = f"Collect into a list and call `{join}` once after the loop" if stmt.value is call else None
            yield self.finding(call, message, title, data={"accumulator": target.id})


    def _pure_accumulator(self, analysis: Analysis, stmt: ast.stmt, call: ast.Call, name: str) -> bool:
        """Only grown here and not read elsewhere in the loop: `x = torch.cat((x, skip))` in a
        U-Net, `out = torch.cat((out, token))` in generation and `x = torch.cat([x, layer(x)], 1)`
        in a DenseNet block (the new piece is computed from the whole) are not collect-then-use.
        The reads that only grow it are its own: the target, the bare piece in the list, the
        `acc is None` test of the first-time form, and reads of what it is (`acc.new_zeros(...)`,
        `acc.shape`) within the statement."""
        loop = analysis.context(stmt).loop
        if analysis.loop_rebinds(loop, name, besides=stmt):
            return False
        own = {id(n) for n in walk_nodes(stmt.targets[0])}
        own |= {id(e) for e in call.args[0].elts if isinstance(e, ast.Name) and e.id == name}
        if isinstance(stmt.value, ast.IfExp):
            own |= {id(n) for n in walk_nodes(stmt.value.test)}
        # `acc.new_zeros(...)`, `acc.shape[0]` in the new piece read only what it is, not its data.
        own |= {id(n.value) for n in walk_nodes(stmt) if isinstance(n, ast.Attribute) and n.attr in _METADATA
                and isinstance(n.value, ast.Name) and n.value.id == name}
        for node in walk_nodes(loop.node):
            if isinstance(node, ast.Name) and node.id == name and id(node) not in own:
                return False
        return True


_METADATA = {"shape", "dtype", "device", "ndim", "size", "dim", "new_zeros", "new_ones", "new_full", "new_empty",
             "new_tensor"}


def _first_time_or_join(value: ast.AST, call: ast.Call) -> bool:
    """`x if acc is None else torch.cat([acc, x])` (either way round): the first piece, then joins."""
    if not isinstance(value, ast.IfExp) or call not in (value.body, value.orelse):
        return False
    test = value.test
    return (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot))
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None)


SHORT_RANGE = 16  # `range(10)`: ten pieces; the quadratic copies are negligible


def _short_loop(analysis: Analysis, loop) -> bool:
    """A `for` loop whose length is known to be small: a literal range, or the rows of one
    tensor or one batch (already in memory, so its length is one batch size, not a dataset)."""
    node = loop.node if loop is not None else None
    if not isinstance(node, ast.For):
        return False
    iterable = node.iter
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id in ("zip", "enumerate"):
        parts = iterable.args[:1] if iterable.func.id == "enumerate" else iterable.args
        return bool(parts) and all(_short_sequence(analysis, part, node) for part in parts)
    return _short_sequence(analysis, iterable, node)


def _short_sequence(analysis: Analysis, expr: ast.AST, at: ast.AST) -> bool:
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "range":
        bounds = [a.value for a in expr.args if isinstance(a, ast.Constant) and isinstance(a.value, int)]
        if len(bounds) != len(expr.args) or not 1 <= len(bounds) <= 2:
            return False
        return (bounds[-1] - (bounds[0] if len(bounds) == 2 else 0)) <= SHORT_RANGE
    return _one_tensor_or_batch(analysis, expr, at, depth=0)


def _one_tensor_or_batch(analysis: Analysis, expr: ast.AST, at: ast.AST, depth: int) -> bool:
    """A torch call's result, one batch drawn with `next(...)`, or a subscript, `.data`,
    `.cpu()`/`.detach()` of one, directly or through a name assigned once before `at`."""
    if depth > 4:
        return False
    while True:
        if isinstance(expr, ast.Subscript):
            expr = expr.value
        elif isinstance(expr, ast.Attribute) and expr.attr == "data":
            expr = expr.value
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in (
                "cpu", "detach", "float", "to", "cuda"):
            expr = expr.func.value
        else:
            break
    if isinstance(expr, ast.Call):
        if isinstance(expr.func, ast.Name) and expr.func.id == "next":
            return True  # one batch of a loader or iterator
        qualname = analysis.call_qualname(expr) or ""
        # A tensor function (`torch.cumsum`, `torch.randn`): `torch.<lowercase>`, not a
        # DataLoader, a module or `torch.load`'s checkpoint.
        return qualname.count(".") == 1 and qualname.startswith("torch.") and qualname[6:7].islower() \
            and qualname != "torch.load"
    if isinstance(expr, ast.Name):
        assignment = analysis.roles_for(at).last_assignment(expr.id, at)
        value = getattr(assignment, "value", None)
        return value is not None and _one_tensor_or_batch(analysis, value, at, depth + 1)
    return False

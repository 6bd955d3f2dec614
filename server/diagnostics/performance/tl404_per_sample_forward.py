"""TL404 per-sample-forward: flags a loop over the indices of a batch (`range(x.size(0))`,
`range(len(batch))`) that calls a model on one sample `x[i]` at a time.
"""
from __future__ import annotations

import ast
from typing import Iterator

from torch_lsp.analysis import Analysis
from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import Finding, Rule
from torch_lsp.diagnostics.correctness.provenance import followed
from torch_lsp.roles import dominates
from torch_lsp.syntax_nodes import walk_nodes


@register
class PerSampleForward(Rule):
    """
    ## What it does
    Flags a loop over the indices of a batch (`range(x.size(0))`, `range(len(batch))`,
    `range(B)` after `B = x.size(0)` or `B, C, H, W = x.shape`) that calls a model on one
    sample `x[i]` (or `x[i:i + 1]`) at a time (passed by position or by keyword), also as the
    element of a comprehension over those indices (`[model(x[i][None]) for i in range(len(x))]`).
    Not flagged: a step that
    carries state from one iteration to the next (`output, hidden = decoder(x[i], hidden)`,
    a recurrent decoder fed one token at a time, also through a later `hidden = out`): each
    call needs the one before it.

    ## Why is this bad
    A model call per sample wastes the parallelism the hardware is built for: each call
    launches every kernel for a batch of one, typically tens of times slower.

    ## Example
    ```python
    for i in range(images.size(0)):
        outputs.append(model(images[i].unsqueeze(0)))
    ```

    ## Use instead
    ```python
    outputs = model(images)
    ```
    """

    code = "TL404"
    name = "per-sample-forward"
    severity = "information"
    fix_safety = "none"

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        for loop in analysis.loops:
            node = loop.node
            if not isinstance(node, ast.For) or not isinstance(node.target, ast.Name):
                continue
            batch = _batch_of_range(analysis, node.iter)
            if batch is None:
                continue
            index = node.target.id
            roles = analysis.roles_for(loop.function)
            for call in loop.direct_calls:
                model = roles.model_name(call)
                inputs = [*call.args, *(k.value for k in call.keywords)]  # `model(input_ids=ids[i][None])` too
                if model and any(_indexes(_followed_in_loop(analysis, arg, node), batch, index) for arg in inputs) \
                        and not _carries_state(node, call):
                    message = (
                        f"`{model}` is called on one sample of `{batch}` per iteration; batched work is far faster. "
                        f"Call `{model}({batch})` once (or on slices of several samples)."
                    )
                    yield self.finding(call, message)
        yield from self._comprehensions(analysis)

    def _comprehensions(self, analysis: Analysis) -> Iterator[Finding]:
        """`torch.stack([model(x[i][None]) for i in range(x.size(0))])`: the same per-sample
        forward written as a comprehension (one generator; no state can pass between its calls)."""
        for call in analysis.calls:
            comprehension = _enclosing_comprehension(analysis, call)
            if comprehension is None or len(comprehension.generators) != 1:
                continue
            generator = comprehension.generators[0]
            if not isinstance(generator.target, ast.Name):
                continue
            batch = _batch_of_range(analysis, generator.iter)
            if batch is None:
                continue
            model = analysis.roles_for(call).model_name(call)
            inputs = [*call.args, *(k.value for k in call.keywords)]
            if model and any(_indexes(arg, batch, generator.target.id) for arg in inputs):
                yield self.finding(call, (
                    f"`{model}` is called on one sample of `{batch}` per element of the comprehension; batched work is "
                    f"far faster. Call `{model}({batch})` once (or on slices of several samples)."
                ))


def _enclosing_comprehension(analysis: Analysis, call: ast.Call):
    """The comprehension whose element (`elt`, or a dict's key or value) holds `call`, or None;
    a call in a `for` clause or a condition is not run per element on its own."""
    child: ast.AST = call
    node = analysis.parents.get(call)
    while node is not None and not isinstance(node, (ast.stmt, ast.Lambda)):
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            return node if child is node.elt else None
        if isinstance(node, ast.DictComp):
            return node if child is node.key or child is node.value else None
        child, node = node, analysis.parents.get(node)
    return None


def _carries_state(loop: ast.For, call: ast.Call) -> bool:
    """The call's result rebinds one of its own arguments in the loop (`out, hidden =
    decoder(x[i], hidden)`), directly or through names bound from it later in the loop
    (`out = rnn_cell(x[i:i + 1], hidden)`, then `hidden = out`): a recurrence, which no
    batching over the loop can replace."""
    arguments = {n.id for arg in [*call.args, *(k.value for k in call.keywords)]
                 for n in walk_nodes(arg) if isinstance(n, ast.Name)}
    assignments = [s for s in walk_nodes(loop) if isinstance(s, ast.Assign)]
    own = next((s for s in assignments if s.value is call), None)
    if own is None:
        return False
    derived = {n.id for target in own.targets for n in walk_nodes(target) if isinstance(n, ast.Name)}
    grown = True
    while grown and not derived & arguments:  # names bound from the result, in any order (the loop repeats)
        grown = False
        for statement in assignments:
            bound = _bound_names(statement)
            if not bound <= derived and any(isinstance(n, ast.Name) and n.id in derived
                                            for n in walk_nodes(statement.value)):
                derived |= bound
                grown = True
    return bool(derived & arguments)


def _bound_names(statement: ast.Assign) -> set[str]:
    """The plain names an assignment binds (`out, hidden = ...`; not `x[i] = ...`)."""
    names: set[str] = set()
    for target in statement.targets:
        elements = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
        names.update(e.id for e in elements if isinstance(e, ast.Name))
    return names


def _batch_of_range(analysis: Analysis, node: ast.AST) -> str | None:
    """`x` for `range(x.size(0))`, `range(x.shape[0])`, `range(len(x))`, and for `range(B)`
    after `B = x.size(0)` or `B, C, H, W = x.shape`."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range"):
        return None
    if len(node.args) != 1:
        return None
    size = node.args[0]
    if isinstance(size, ast.Name):
        return _batch_of_size_name(analysis, size)
    return _batch_of_size(size)


def _batch_of_size(size: ast.AST) -> str | None:
    if isinstance(size, ast.Call) and isinstance(size.func, ast.Name) and size.func.id == "len" and size.args:
        return size.args[0].id if isinstance(size.args[0], ast.Name) else None
    if isinstance(size, ast.Call) and isinstance(size.func, ast.Attribute) and size.func.attr == "size":
        if size.args and isinstance(size.args[0], ast.Constant) and size.args[0].value == 0:
            return size.func.value.id if isinstance(size.func.value, ast.Name) else None
    if isinstance(size, ast.Subscript) and isinstance(size.value, ast.Attribute) and size.value.attr == "shape":
        if isinstance(size.slice, ast.Constant) and size.slice.value == 0 and isinstance(size.value.value, ast.Name):
            return size.value.value.id
    return None


def _batch_of_size_name(analysis: Analysis, name: ast.Name) -> str | None:
    """The batch whose size `name` surely holds: `B = x.size(0)`, or the first of
    `B, C, H, W = x.shape` / `B, T = x.shape[:2]` / `B, T, _ = x.size()`."""
    assignment = analysis.roles_for(name).last_assignment(name.id, name)
    use = analysis.statement_of(name)
    if assignment is None or use is None or not isinstance(assignment.statement, ast.Assign):
        return None
    statement = assignment.statement
    if len(statement.targets) != 1 or not dominates(analysis, statement, use):
        return None
    target, value = statement.targets[0], statement.value
    if isinstance(target, ast.Name):
        return _batch_of_size(value)
    if not (isinstance(target, ast.Tuple) and target.elts and isinstance(target.elts[0], ast.Name)
            and target.elts[0].id == name.id):
        return None
    if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Slice) and value.slice.lower is None:
        value = value.value  # `x.shape[:2]`
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "size" \
            and not value.args and not value.keywords:
        value = value.func  # `x.size()`: the sizes, as `x.shape`
    elif not (isinstance(value, ast.Attribute) and value.attr == "shape"):
        return None
    return value.value.id if isinstance(value.value, ast.Name) else None


def _followed_in_loop(analysis: Analysis, arg: ast.AST, loop: ast.For) -> ast.AST:
    """`x = batch[i].unsqueeze(0)` then `model(x)` in the loop's body: the sample the name holds."""
    value, bound = followed(analysis, arg)
    if bound is None or not any(value is n for n in walk_nodes(loop)):
        return arg
    return value


def _indexes(expr: ast.AST, batch: str, index: str) -> bool:
    for node in walk_nodes(expr):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == batch:
            item = node.slice
            if isinstance(item, ast.Tuple) and item.elts and _one_row_slice(item.elts[0], index):
                return True  # `wavs[i:i + 1, :length]`: one sample, its batch dim kept, cropped
            # (`x[i, :]` is not taken: in a sequence-first `[T, B, ...]` tensor it is a time step)
            if isinstance(item, ast.Name) and item.id == index or _one_row_slice(item, index):
                return True
    return False


def _one_row_slice(item: ast.AST, index: str) -> bool:
    """`i:i + 1` (or `i:1 + i`): one sample that keeps its batch dim."""
    if not (isinstance(item, ast.Slice) and item.step is None and isinstance(item.lower, ast.Name)
            and item.lower.id == index and isinstance(item.upper, ast.BinOp) and isinstance(item.upper.op, ast.Add)):
        return False
    sides = (item.upper.left, item.upper.right)
    return any(isinstance(a, ast.Name) and a.id == index for a in sides) and any(
        isinstance(b, ast.Constant) and b.value == 1 and not isinstance(b.value, bool) for b in sides)

"""TL301 accumulated-graph: flags, inside a training loop, a tensor that still carries the autograd
graph (a loss, a model output) appended to a list or added into a running total that outlives
the iteration: `losses.append(loss)`, `total += loss`.
"""
from __future__ import annotations

import ast
from typing import Iterator

from torch_lsp.analysis import Analysis, LoopInfo, is_self_update, reaches_a_backward
from torch_lsp.diagnostics.correctness.provenance import followed
from torch_lsp.diagnostics.performance.tl401_sync_in_training_loop import tests_modulo
from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import Finding, Rule
from torch_lsp.syntax_nodes import accumulation, call_name, node_key, walk_nodes


def _backpropagated_later(analysis: Analysis, loop: LoopInfo, name: str) -> bool:
    """The accumulated graph is used on purpose: `sum(losses).backward()` after the loop, also
    through a name bound from it there (`meta_loss = torch.stack(task_losses).mean()`, then
    `meta_loss.backward()`: second-order MAML keeps each task's graph for the meta-update)."""
    return reaches_a_backward(loop.function, {name}, (loop.node.end_lineno + 1, -1))


def _reset_only_periodically(analysis: Analysis, loop: LoopInfo, name: str) -> bool:
    """Every fresh binding of `name` in the loop runs only on some steps (`if (i + 1) % accum == 0:
    ... window_loss = 0.0`, also through a flag bound to such a test), and nothing in the loop
    backpropagates through it: the running total still outlives the iterations between resets,
    keeping each one's graph alive (an accumulation window defeated)."""
    if isinstance(loop.node, (ast.For, ast.AsyncFor)) and any(
            isinstance(n, ast.Name) and n.id == name for n in walk_nodes(loop.node.target)):
        return False
    inside = {id(s) for s in loop.statements}
    fresh = [a.statement for a in analysis.roles_for(loop.function).assignments.get(name, ())
             if id(a.statement) in inside and not isinstance(a.statement, ast.AugAssign)
             and not is_self_update(a.statement, name)]
    if not fresh:
        return False
    for call in loop.calls:
        if call_name(call) == "backward" and any(isinstance(n, ast.Name) and n.id == name for n in walk_nodes(call)):
            return False  # `window_loss.backward()` at the boundary: the graphs are kept on purpose
    return all(
        any(in_body and id(guard) in inside and tests_modulo(guard.test, lambda n: followed(analysis, n)[0])
            for guard, in_body in analysis.context(stmt).guards)
        for stmt in fresh)


def _bound_afresh_each_optimizer_step(analysis: Analysis, loop: LoopInfo, name: str) -> bool:
    """`loop` runs the micro-batches of one optimizer step (`for chunk in chunks: ...
    loss.backward()`, stepping no optimizer itself) inside a loop that binds `name` afresh each
    iteration and steps the optimizer there: the list lives one step, its graphs freed by each
    backward or used by the step's own, so memory does not grow from step to step."""
    if analysis.optimizer_steps(loop):
        return False
    outer = loop.parent
    while outer is not None:
        if analysis.optimizer_steps(outer, direct=True):
            return analysis.loop_rebinds(outer, name) and not _reset_only_periodically(analysis, outer, name)
        outer = outer.parent
    return False


def _total_of_one_step_per_call(analysis: Analysis, loop: LoopInfo, name: str) -> bool:
    """`loop` runs the micro-batches of one optimizer step in a function that is that step: it
    binds `name` afresh before the loop and steps an optimizer after it, in no loop of its own
    (`total = torch.zeros([])`, `for _ in range(accumulate): ... loss.backward(); total += loss`,
    then `scaler.step(opt)`).  Each call's total lives one step, and each backward already
    freed what its graph held, so nothing grows from step to step."""
    if loop.parent is not None or loop.function.is_module or analysis.optimizer_steps(loop):
        return False
    roles = analysis.roles_for(loop.function)
    start, end = loop.node.lineno, loop.node.end_lineno
    stepped_after = any(call.lineno > end and not analysis.context(call).loops and roles.is_optimizer_step(call)
                        for call in loop.function.calls)
    return stepped_after and any(
        assignment.statement.lineno < start and not analysis.context(assignment.statement).loops
        and not isinstance(assignment.statement, ast.AugAssign) for assignment in roles.assignments.get(name, ()))


def _attribute_rebound(loop: LoopInfo, container: ast.Attribute) -> bool:
    """The loop body binds the attribute afresh (`self.loss = self._make_empty_loss()`, not
    `self.total = self.total + loss`): what is added into it lives one iteration."""
    target = node_key(container)

    def same(node: ast.AST) -> bool:
        return isinstance(node, ast.Attribute) and node_key(node) == target

    for stmt in loop.statements:
        if isinstance(stmt, ast.Assign) and any(same(t) for t in stmt.targets) or (
                isinstance(stmt, ast.AnnAssign) and same(stmt.target) and stmt.value is not None):
            if not any(same(n) for n in walk_nodes(stmt.value)):
                return True
    return False


_MAPPING_METHODS = ("keys", "items", "values")


def _read_as_mapping(loop: LoopInfo, value: ast.AST, container: ast.AST) -> bool:
    """The appended value, or what the list holds, is read as a dict in the function
    (`log.items()`, `logs[0].keys()`): a record of logged numbers unpacked beside a model's
    loss (`loss, log = model.forward(...)`), not a tensor, whose `.detach()` would fail."""
    if not isinstance(value, ast.Name):
        return False
    for call in loop.function.calls:
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr in _MAPPING_METHODS and not call.args):
            continue
        read = func.value
        if isinstance(read, ast.Name) and read.id == value.id:
            return True
        if isinstance(read, ast.Subscript) and isinstance(container, ast.Name) and isinstance(read.value, ast.Name) \
                and read.value.id == container.id:
            return True
    return False


def _appends_to_an_object(roles, container: ast.AST, kind: str, at: ast.stmt) -> bool:
    """`run_loss = CumulativeAverage()`, then `run_loss.append(loss)`: the container is an
    instance of a class (a metric tracker, whose `append` may detach or reduce what it gets),
    not a list; what its `append` keeps is not known here."""
    if kind not in ("append", "extend") or not isinstance(container, ast.Name):
        return False
    assignment = roles.last_assignment(container.id, at)
    if assignment is None or not isinstance(assignment.value, ast.Call):
        return False
    made = call_name(assignment.value) or ""
    return made[:1].isupper()


@register
class AccumulatedGraph(Rule):
    """
    ## What it does
    Flags, inside a training loop, a tensor that still carries the autograd graph (a loss,
    a model output) appended to a list or added into a running total that outlives the
    iteration: `losses.append(loss)`, `outputs.extend(logits)`, `total += loss`,
    `ema = 0.98 * ema + 0.02 * loss`, `sums["loss"] += loss`, also kept on a trainer object
    (`self.total += loss`, `self.history["loss"].append(loss)`). Not flagged: a running total
    the loop binds afresh each iteration (`loss = 0.0`, `self.loss = self._make_empty_loss()`),
    which sums one step's loss terms. A total reset only on some steps (`if (i + 1) % accum
    == 0: ... window_loss = 0.0`) still outlives the steps in between, and is flagged unless
    the loop backpropagates through it.  Nor is a list or total that a loop over one step's
    micro-batches or loss terms fills (each backward there frees what it saved, or keeps it for
    the next term on purpose with `retain_graph`) while the loop around it, which takes the
    optimizer step, binds it afresh each step.

    ## Why is this bad
    Each stored tensor keeps its whole graph — every activation of the forward pass —
    alive, so memory grows every step until the process runs out of (GPU) memory.

    ## Example
    ```python
    for x, y in loader:
        loss = criterion(model(x), y)
        ...
        losses.append(loss)
        running += loss
    ```

    ## Use instead
    ```python
    for x, y in loader:
        loss = criterion(model(x), y)
        ...
        losses.append(loss.detach())
        running += loss.item()
    ```
    """

    code = "TL301"
    name = "accumulated-graph"
    severity = "warning"
    fix_safety = "safe"

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        for loop in analysis.training_loops:
            if not analysis.is_step_loop(loop):
                continue
            roles = analysis.roles_for(loop.function)
            for stmt in loop.statements:
                if analysis.enclosing_step_loop(stmt) is not loop:
                    continue
                found = accumulation(stmt)
                if found is None:
                    continue
                container, value, kind = found
                if not roles.carries_graph(value, stmt) or _read_as_mapping(loop, value, container) \
                        or _appends_to_an_object(roles, container, kind, stmt):
                    continue
                if isinstance(container, ast.Name):
                    if (analysis.loop_rebinds(loop, container.id)
                            and not _reset_only_periodically(analysis, loop, container.id)):
                        continue
                    if _backpropagated_later(analysis, loop, container.id):
                        continue
                    if _bound_afresh_each_optimizer_step(analysis, loop, container.id):
                        continue
                    if _total_of_one_step_per_call(analysis, loop, container.id):
                        continue
                elif isinstance(container, ast.Subscript):
                    # `history["loss"].append(loss)`, `self.history["loss"].append(loss)`
                    root = container
                    while isinstance(root, ast.Subscript):
                        root = root.value
                    if isinstance(root, ast.Name) and analysis.loop_rebinds(loop, root.id):
                        continue
                    if not isinstance(root, (ast.Name, ast.Attribute)):
                        continue
                elif not isinstance(container, ast.Attribute):
                    continue
                elif _attribute_rebound(loop, container):
                    continue  # `self.loss = self._make_empty_loss()` each iteration, then `self.loss += ...`
                yield self._report(stmt, container, value, kind)

    def _report(self, stmt: ast.stmt, container: ast.AST, value: ast.AST, kind: str) -> Finding:
        text, holder = ast.unparse(value), ast.unparse(container)
        simple = isinstance(value, (ast.Name, ast.Attribute))
        shown = text if simple else f"({text})"
        if kind == "append":
            message = (
                f"`{holder}.append({text})` keeps every iteration's autograd graph alive because `{text}` is still "
                f"attached to it; memory grows each step. Append `{shown}.detach()` (or `.item()` for a number)."
            )
            fix = f"Detach `{text}` before appending"
        elif kind == "extend":
            piece = text if isinstance(value, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)) else f"({text})"
            message = (
                f"`{holder}.extend({text})` keeps every iteration's autograd graph alive because the pieces of "
                f"`{text}` are still attached to it; memory grows each step. Extend with `{piece}.detach()`."
            )
            fix = f"Detach `{text}` before extending"
        else:
            message = (
                f"Adding `{text}` into `{holder}` chains every iteration's autograd graph onto the running total; "
                f"memory grows each step. Add `{shown}.item()` (or `.detach()`) instead."
            )
            fix = f"Use `{shown}.item()` in the running sum"
        return self.finding(stmt, message, fix, data={"kind": kind, "value": text})

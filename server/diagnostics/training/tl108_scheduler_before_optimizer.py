"""TL108 scheduler-before-optimizer: flags `scheduler.step()` that, within one loop body, comes
before the first `optimizer.step()`.
"""
from __future__ import annotations

import ast
from typing import Iterator

from torch_lsp.analysis import Analysis, constructions_of
from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import Finding, FixInfo, Rule
from torch_lsp.syntax_index import syntax_index
from torch_lsp.syntax_nodes import dotted
from torch_lsp.workspace_files import project_definition


@register
class SchedulerBeforeOptimizer(Rule):
    """
    ## What it does
    Flags `scheduler.step()` that, within one loop body, comes before the first
    `optimizer.step()`; also on a trainer's attributes (`self.sched.step()`), not in test files,
    nor for a scheduler whose `last_epoch` the file sets itself (`self.scheduler.last_epoch =
    self.start_epoch - 1`: the program positions the schedule for a step at each epoch's start),
    nor for a scheduler of a class of the project that is no torch scheduler and writes the
    learning rate into the param groups itself (it sets the rate of the coming step).
    The fix moves the scheduler step after the optimizer step; on a trainer's attribute it is
    unsafe (a method called in between may read the scheduler).

    ## Why is this bad
    Since PyTorch 1.1 the scheduler must step after the optimizer; stepping it first skips
    the first value of the schedule (warm-up starts one step late, cosine ends early), and
    PyTorch warns about it at run time.

    ## Example
    ```python
    for x, y in loader:
        loss.backward()
        scheduler.step()
        optimizer.step()
    ```

    ## Use instead
    ```python
    for x, y in loader:
        loss.backward()
        optimizer.step()
        scheduler.step()
    ```
    """

    code = "TL108"
    name = "scheduler-before-optimizer"
    severity = "warning"
    fix_safety = "safe"

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        if analysis.is_test_file:
            return  # a test (often one ported from PyTorch's own suite) may step in any order on purpose
        reported: set[int] = set()
        for loop in analysis.loops:
            roles = analysis.roles_for(loop.function)
            steps = [c for c in loop.calls if roles.is_optimizer_step(c)]
            if not steps:
                continue
            first_step = min(steps, key=lambda c: (c.lineno, c.col_offset))
            for call in loop.calls:
                if id(call) in reported or call.args or call.keywords or not roles.is_scheduler_step(call):
                    continue
                if _positioned_by_hand(analysis, call):
                    continue  # `scheduler.last_epoch = start_epoch - 1`: the program counts the steps itself
                if _sets_the_rate_itself(analysis, loop.function, call):
                    continue  # the project's own scheduler sets the rate the coming step uses
                if (call.lineno, call.col_offset) < (first_step.lineno, first_step.col_offset):
                    reported.add(id(call))
                    message = (
                        f"`{ast.unparse(call)}` runs before `{ast.unparse(first_step)}` in this loop, so the first "
                        f"learning-rate value of the schedule is skipped. Step the scheduler after the optimizer."
                    )
                    finding = self.finding(
                        call, message, f"Move `{ast.unparse(call)}` after `{ast.unparse(first_step)}`",
                        data={"optimizer_step_line": first_step.lineno},
                    )
                    if finding.fix is not None and isinstance(call.func, ast.Attribute) \
                            and isinstance(call.func.value, ast.Attribute):
                        # A trainer's scheduler may be read by any method called on the way.
                        finding.fix = FixInfo(finding.fix.title, "unsafe")
                    yield finding


def _sets_the_rate_itself(analysis: Analysis, function, call: ast.Call) -> bool:
    """`scheduler.step()` of a class of the project that is no torch scheduler (no base class)
    and whose `step` writes the learning rate into the optimizer's param groups itself,
    stepping no other scheduler (vq-vae-2's `CycleScheduler`): it sets the rate the coming optimizer
    step uses, so it runs before it; torch's ordering of `LRScheduler.step()` does not apply."""
    receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
    if not isinstance(receiver, ast.Name):
        return False
    built = constructions_of(analysis, function, receiver.id, call)
    return bool(built) and all(_own_rate_class(analysis, value) for value in built)


def _own_rate_class(analysis: Analysis, built: ast.AST) -> bool:
    found = project_definition(analysis, built.func) if isinstance(built, ast.Call) else None
    if found is None or not isinstance(found[1], ast.ClassDef):
        return False
    cls = found[1]
    if any(not (isinstance(base, ast.Name) and base.id == "object") for base in cls.bases) or cls.keywords:
        return False  # perhaps a torch scheduler (`lr_scheduler._LRScheduler`), or built on one
    step = next((node for node in cls.body if isinstance(node, ast.FunctionDef) and node.name == "step"), None)
    if step is None:
        return False
    nodes = list(ast.walk(step))
    writes_rate = any(isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store)
                      and isinstance(node.slice, ast.Constant) and node.slice.value == "lr" for node in nodes)
    # `self.inner.step()` as a statement steps another scheduler (a wrapper of a torch one);
    # `lr = self.phase.step()` only computes the value it writes
    steps_another = any(isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
                        and isinstance(node.value.func, ast.Attribute) and node.value.func.attr == "step"
                        for node in nodes)
    return writes_rate and not steps_another


def _positioned_by_hand(analysis: Analysis, call: ast.Call) -> bool:
    """The file sets this scheduler's `last_epoch` itself (`self.scheduler.last_epoch =
    self.start_epoch - 1`, a resume that positions the schedule so an epoch-start step lands
    on the epoch's value): the order of the steps is chosen, not a slip."""
    scheduler = dotted(call.func.value) if isinstance(call.func, ast.Attribute) else None
    return scheduler is not None and any(
        isinstance(attribute.ctx, ast.Store) and dotted(attribute.value) == scheduler
        for attribute in syntax_index(analysis).attributes_named("last_epoch"))

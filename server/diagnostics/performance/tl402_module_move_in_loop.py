"""TL402 module-move-in-loop: flags a module (a model or a loss module) moved with `.to(...)`,
`.cuda()` or `.cpu()` inside a loop.
"""
from __future__ import annotations

import ast
from typing import Iterator

from torch_lsp.analysis import Analysis, is_trainer_model_attribute
from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import Finding, Rule
from torch_lsp.diagnostics.performance.tl401_sync_in_training_loop import in_branch_that_leaves
from torch_lsp.syntax_nodes import call_name, has_star_args, is_self_attribute, keyword, moved_value, node_key, receiver


@register
class ModuleMoveInLoop(Rule):
    """
    ## What it does
    Flags a module (a model or a loss module, also `self.model` of a trainer or worker
    class) moved with `.to(...)`, `.cuda()` or `.cpu()` inside a loop. Moving data batches in a loop is fine, and so is a move that runs once
    (under `if epoch == epochs - 1:`, or in a branch that leaves the loop), or a module the
    same loop also moves elsewhere (`m.eval().cpu()` to save a checkpoint, then
    `m.to(device)` back): hoisting either move would leave it on the wrong device. Neither
    is a move to a device the loop changes (`for device in ["cpu", "cuda"]: model.to(device)`),
    nor of a module the loop grows first (`model.add_module(...)`, `model.head = nn.Linear(...)`,
    or a method called on each of `model.modules()`: dynamic heads of continual learning), whose
    new parameters start on the CPU.

    ## Why is this bad
    After the first iteration the move does nothing useful but still walks every parameter
    and buffer, each iteration; it also hides where the model really lives.

    ## Example
    ```python
    for epoch in range(epochs):
        model.to(device)
        for x, y in loader:
            ...
    ```

    ## Use instead
    ```python
    model.to(device)
    for epoch in range(epochs):
        for x, y in loader:
            ...
    ```
    """

    code = "TL402"
    name = "module-move-in-loop"
    severity = "warning"
    fix_safety = "safe"

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        for call in analysis.iter_calls("to", "cuda", "cpu"):
            target = receiver(call)
            ctx = analysis.context(call)
            if not ctx.loops or has_star_args(call):
                continue
            if isinstance(target, ast.Name):
                roles = analysis.roles_for(call)
                if not (roles.is_model(target.id) or roles.is_criterion(target.id)):
                    continue
            elif not (is_self_attribute(target) and is_trainer_model_attribute(analysis, ctx.function, target.attr)):
                continue  # `self.model.to(device)` in a worker's or trainer's loop counts too
            if call_name(call) == "to" and not self._moves_device(analysis, call):
                continue
            stmt = analysis.statement_of(call)
            if not _only_moves(stmt, target):
                continue
            if _rebound_in_loop(analysis, ctx.loops[-1], target, stmt):
                continue  # a new module each iteration; rebound only by an outer loop (per fold), the inner one repeats the move
            if self._destination_varies(analysis, call, ctx.loops[-1]):
                continue  # `for device in ["cpu", "cuda"]: model.to(device)`: a new place each time
            if self._moved_elsewhere_in_loop(analysis, call, ast.unparse(target), ctx.loops[-1]):
                continue  # `m.eval().cpu()` to save a checkpoint, then `m.to(device)` back: hoisting breaks it
            if self._runs_once(analysis, call, ctx.loops[-1]):
                continue  # `if epoch == epochs - 1: model.cpu()`: not every iteration
            if isinstance(target, ast.Name) and _grows(ctx.loops[-1], target.id):
                continue  # new layers or parameters each iteration start on the CPU: they need the move
            text = ast.unparse(call)
            message = (
                f"`{text}` moves `{ast.unparse(target)}` on every iteration of this loop; after the first it is wasted work. "
                f"Move it before the loop."
            )
            yield self.finding(call, message, f"Move `{ast.unparse(stmt).strip()}` before the loop")

    def _runs_once(self, analysis: Analysis, call: ast.Call, loop) -> bool:
        """Inside the loop, an enclosing `if` tests a loop variable for equality (`epoch ==
        epochs - 1`), or the branch leaves the loop: the move happens once, not per iteration."""
        if in_branch_that_leaves(analysis, call, loop.node):
            return True
        header = loop.node.target if isinstance(loop.node, ast.For) else None
        loop_names = {n.id for n in ast.walk(header) if isinstance(n, ast.Name)} if header is not None else set()
        for if_stmt, in_body in analysis.context(call).guards:
            test = if_stmt.test
            if in_body and loop.node.lineno < if_stmt.lineno and isinstance(test, ast.Compare) \
                    and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq) \
                    and any(isinstance(side, ast.Name) and side.id in loop_names for side in (test.left, *test.comparators)):
                return True
        return False

    def _moved_elsewhere_in_loop(self, analysis: Analysis, call: ast.Call, name: str, loop) -> bool:
        """Another `.cpu()`/`.cuda()`/`.to(...)` of the same module (through a chain such as
        `m.eval().cpu()`) in the loop, or a `.type(...)` to a legacy tensor type
        (`model.type(torch.HalfTensor)` makes a CPU module): the module travels back and forth
        on purpose."""
        for other in loop.calls:
            if other is call or call_name(other) not in ("to", "cuda", "cpu", "type"):
                continue
            base = receiver(other)
            while isinstance(base, ast.Call) and isinstance(base.func, ast.Attribute):
                base = base.func.value
            if isinstance(base, (ast.Name, ast.Attribute)) and ast.unparse(base) == name:
                return True
        return False

    def _destination_varies(self, analysis: Analysis, call: ast.Call, loop) -> bool:
        """A name in the `.to(...)`/`.cuda(...)` arguments is rebound by the innermost loop
        around the move (`x.device` of each batch is not: it names the same device every
        time).  Rebound by an outer loop only, the move is still repeated by the inner one."""
        given = [a for a in list(call.args) + [kw.value for kw in call.keywords]
                 if not (isinstance(a, ast.Attribute) and a.attr == "device")]
        names = {n.id for arg in given for n in ast.walk(arg) if isinstance(n, ast.Name)}
        return any(analysis.loop_rebinds(loop, name) for name in names)

    def _moves_device(self, analysis: Analysis, call: ast.Call) -> bool:
        if not call.args and keyword(call, "device") is None:
            return False
        first = call.args[0] if call.args else None
        if first is not None:
            qualname = analysis.qualname(first) or ""
            if qualname.startswith("torch.") and qualname.split(".")[-1] in _DTYPES:
                return False
        return True


_GROWING_CALLS = {"add_module", "register_module", "register_parameter", "register_buffer", "append", "extend"}
_SUBMODULE_WALKS = {"modules", "children", "named_modules", "named_children"}


def _grows(loop, name: str) -> bool:
    """The loop may add layers or parameters to module `name` before moving it: it registers
    them (`model.add_module(...)`, `model.heads.append(...)`), assigns a layer to one of its
    attributes (`model.head = nn.Linear(...)`), or calls a method of each of its submodules
    (`for m in model.modules(): m.adaptation(experience)`: dynamic heads that grow)."""
    walked = set()
    for stmt in loop.statements:
        if isinstance(stmt, ast.For) and isinstance(stmt.iter, ast.Call) and call_name(stmt.iter) in _SUBMODULE_WALKS:
            root = receiver(stmt.iter)
            if isinstance(root, ast.Name) and root.id == name:
                walked.update(n.id for n in ast.walk(stmt.target) if isinstance(n, ast.Name))
        if isinstance(stmt, ast.Assign) and any(
                isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == name
                for t in stmt.targets) and isinstance(stmt.value, ast.Call):
            return True
    for call in loop.calls:
        base = receiver(call)
        while isinstance(base, ast.Attribute):
            base = base.value
        if not isinstance(base, ast.Name):
            continue
        if base.id == name and call_name(call) in _GROWING_CALLS:
            return True
        if base.id in walked and call_name(call) not in ("to", "cuda", "cpu", "eval", "train", "parameters"):
            return True
    return False


_DTYPES = {
    "float", "float16", "float32", "float64", "half", "double", "bfloat16", "int", "int8", "int16", "int32",
    "int64", "long", "bool", "uint8", "complex64", "complex128",
}


def _only_moves(stmt: ast.stmt | None, target: ast.Name | ast.Attribute) -> bool:
    """The statement can do no more than move the module: `model.to(device)`, `model =
    model.to(device)`, `self.model.to(device)`, `self.model = self.model.to(device)`."""
    if isinstance(target, ast.Name):
        return moved_value(stmt, target.id) is not None
    if isinstance(stmt, ast.Expr):
        return True
    return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and node_key(stmt.targets[0]) == node_key(target)


def _rebound_in_loop(analysis: Analysis, loop, target: ast.Name | ast.Attribute, stmt: ast.stmt | None) -> bool:
    """The module is rebound in the loop (other than by the move itself): each iteration moves
    a new one (`self.model = build()` per fold)."""
    if isinstance(target, ast.Name):
        return analysis.loop_rebinds(loop, target.id, besides=stmt)
    text = node_key(target)
    return any(isinstance(s, ast.Assign) and s is not stmt and any(node_key(t) == text for t in s.targets)
               for s in loop.statements)

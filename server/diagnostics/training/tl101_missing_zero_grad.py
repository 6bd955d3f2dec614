"""TL101 missing-zero-grad: flags a training loop that calls `.backward()` and `optimizer.step()`
but never clears the gradients.
"""
from __future__ import annotations

import ast
from typing import Iterator

from torch_lsp.analysis import Analysis, LoopInfo, construction_of
from torch_lsp.codeactions.names import bound_in_loop
from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import FixInfo, Finding, Related, Rule
from torch_lsp.roles import constructed_kind, self_attribute_values
from torch_lsp.syntax_nodes import call_name, dotted, loop_header_span, receiver, root_name


def _clears_gradients(analysis: Analysis, loop: LoopInfo) -> bool:
    """`zero_grad(...)`, `p.grad = None`, `p.grad.zero_()` in the loop or in a local helper it calls."""
    if _calls_clear(loop.calls) or _assigns_grad_none(loop.statements):
        return True
    for call in loop.calls:
        name = call_name(call)
        for function in analysis.function_named(name or ""):
            if _calls_clear(function.calls) or _assigns_grad_none(function.statements):
                return True
    return False


def _calls_clear(calls: list[ast.Call]) -> bool:
    for call in calls:
        name = call_name(call)
        if name in ("zero_grad", "zero_grads"):  # `zero_grads(params)`: Pyro's (`pyro.infer.util`) clears each `.grad`
            return True
        if name in ("zero_", "fill_", "detach_", "requires_grad_") and isinstance(call.func, ast.Attribute):
            target = call.func.value
            if isinstance(target, ast.Attribute) and target.attr == "data":
                target = target.value
            if isinstance(target, ast.Attribute) and target.attr == "grad" and name in ("zero_", "fill_"):
                return True
    return False


def _assigns_grad_none(statements: list[ast.stmt]) -> bool:
    for stmt in statements:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant) and stmt.value.value is None:
            if any(isinstance(t, ast.Attribute) and t.attr == "grad" for t in stmt.targets):
                return True
    return False


@register
class MissingZeroGrad(Rule):
    """
    ## What it does
    Flags a training loop that calls `.backward()` and `optimizer.step()` but never clears
    the gradients.

    ## Why is this bad
    `.backward()` adds into `.grad`. Without `zero_grad()` every step uses the sum of all
    gradients so far, so updates grow and training diverges or silently degrades.
    Clearing is `optimizer.zero_grad()`, `model.zero_grad()`, `p.grad = None`,
    `p.grad.zero_()` (the manual forms may get TL407) or Pyro's `zero_grads(params)`. A `DistributedOptimizer` stepped with
    a `dist_autograd` context is not flagged: its gradients live in the per-iteration
    context and never accumulate (and it has no `zero_grad`). Nor is an optimizer built in
    the loop over tensors the same iteration makes anew (`x = z.detach().clone()`, then
    `torch.optim.SGD([x])`, as latent-optimising guidance does): a new tensor starts without
    a gradient; nor a loop that builds its modules and the optimizer over their parameters
    anew in every iteration (a test taking one step per configuration): new parameters
    start without gradients. Nor a loop whose only step is a training framework's
    `optimizer_step` (`self.strategy.optimizer_step(optimizer, model, scheduler)`, anything
    but torch_xla's `xm.optimizer_step(optimizer)`): whether that step clears the gradients is
    the framework's business (a DeepSpeed engine's `step()` zeroes them). The fix is safe only when the
    optimizer is known to be a `torch.optim` optimizer (constructed in the function, at
    module level, or passed one by every caller in the file); otherwise it is offered as
    unsafe.

    ## Example
    ```python
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    ```

    ## Use instead
    ```python
    for x, y in loader:
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    ```
    """

    code = "TL101"
    name = "missing-zero-grad"
    severity = "warning"
    fix_safety = "safe"

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        for loop in analysis.stepping_loops:
            backward = analysis.backward_calls(loop)
            # `strategy.optimizer_step(optimizer, model, scheduler)`: a training framework's own step
            # (OpenRLHF's DeepSpeed strategy runs the engine's `step()`, which clears the gradients)
            steps = [step for step in analysis.optimizer_steps(loop) if not _framework_step(analysis, step)]
            if not backward or not steps or _clears_gradients(analysis, loop):
                continue
            if any(_distributed_autograd(analysis, call) for call in backward):
                continue  # gradients go to a per-iteration dist_autograd context
            optimizer = _optimizer_expr(steps[0])
            construction = _construction(analysis, loop, steps[0], optimizer)
            if construction is not None and _is_distributed_optimizer(analysis, construction):
                continue
            if construction is not None and _fresh_each_iteration(analysis, loop, construction):
                continue  # new parameters every iteration: their gradients start empty
            if construction is not None and _steps_fresh_tensors(analysis, loop, construction):
                continue  # each iteration's gradients land on tensors made in that iteration
            # An optimizer the loop builds anew does not exist yet at the top of the body.
            built_in_loop = _root_bound_in_loop(optimizer, loop)  # as the fix decides
            where = "before each backward pass" if built_in_loop else "at the start of each iteration"
            message = (
                f"This training loop calls `{ast.unparse(backward[0].func)}()` and `{ast.unparse(steps[0])}` "
                f"but never clears gradients, so they accumulate across steps. "
                f"Call `{optimizer}.zero_grad(set_to_none=True)` {where}."
            )
            known = construction is not None and _known_optimizer(analysis, construction)
            finding = self.finding_at(
                loop_header_span(loop.node), message,
                None if built_in_loop else f"Insert `{optimizer}.zero_grad(set_to_none=True)` at the top of the loop",
                data={"optimizer": optimizer, "safety": "safe" if known else "unsafe"},
            )
            if finding.fix is not None and not known:
                finding.fix = FixInfo(finding.fix.title, "unsafe")  # `zero_grad` may not exist on it
            if construction is not None:
                finding.related.append(Related.at(construction, f"`{optimizer}` is constructed here"))
            yield finding


def _root_bound_in_loop(optimizer: str, loop: LoopInfo) -> bool:
    """The optimizer's name is bound in the loop: the fix that inserts `zero_grad` at the top
    of the loop declines there (`codeactions.fixes.tl101_insert_zero_grad`)."""
    try:
        root = root_name(ast.parse(optimizer, mode="eval").body)
    except SyntaxError:
        return False
    return root in bound_in_loop(loop.node)


_PARAMETER_LISTS = ("parameters", "named_parameters")


def _fresh_each_iteration(analysis: Analysis, loop: LoopInfo, construction: ast.AST) -> bool:
    """The optimizer is built in the loop's body over the parameters of modules also built
    there (`cgen = CopyGenerator(**case)`, `SGD(cgen.parameters(), lr)`, also through names
    bound in the body): every iteration steps new parameters, whose gradients start empty."""
    if not (isinstance(construction, ast.Call) and _inside(loop.node, construction)) or not construction.args:
        return False
    roles = analysis.roles_for(loop.function)
    owners: list[ast.AST] = []
    if not _built_in_loop(roles, loop, construction.args[0], construction, owners, depth=0):
        return False
    return bool(owners)


def _built_in_loop(roles, loop: LoopInfo, expr: ast.AST, at: ast.AST, owners: list, depth: int) -> bool:
    """Every name `expr` reads is bound in the loop's body, a `.parameters()` receiver is a
    module constructed there from names bound there; each such receiver goes to `owners`."""
    if depth > 4:
        return False
    local = {n.id for n in ast.walk(expr) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    called = {id(n.func) for n in ast.walk(expr) if isinstance(n, ast.Call)}
    receivers = {id(n.func.value) for n in ast.walk(expr) if isinstance(n, ast.Call)
                 and isinstance(n.func, ast.Attribute) and n.func.attr in _PARAMETER_LISTS}
    for name in ast.walk(expr):
        if not isinstance(name, ast.Name) or name.id in local or id(name) in called:
            continue
        binding = roles.last_assignment(name.id, at)
        if binding is None or binding.value is None or binding.unpacked or not _inside(loop.node, binding.statement):
            return False
        if id(name) in receivers:
            if not _constructed_from_loop(roles, loop, binding.value, binding.statement):
                return False
            owners.append(binding.value)
        elif not _built_in_loop(roles, loop, binding.value, binding.statement, owners, depth + 1):
            return False
    return True


def _constructed_from_loop(roles, loop: LoopInfo, value: ast.AST, at: ast.AST) -> bool:
    """`CopyGenerator(**case)`, `nn.Linear(d, k)`: a class called (not a method of a local
    object, `model.to(device)` returns the same module) with arguments read only from names
    the loop binds (its header's targets or its body's assignments), not an outer module."""
    if not isinstance(value, ast.Call) or not (dotted(value.func) or "").split(".")[-1][:1].isupper():
        return False
    targets = {n.id for n in ast.walk(loop.node.target) if isinstance(n, ast.Name)} \
        if isinstance(loop.node, (ast.For, ast.AsyncFor)) else set()
    for argument in [*value.args, *(kw.value for kw in value.keywords)]:
        for name in ast.walk(argument):
            if isinstance(name, ast.Name) and name.id not in targets:
                binding = roles.last_assignment(name.id, at)
                if binding is None or not _inside(loop.node, binding.statement) or not isinstance(binding.value, ast.Constant):
                    return False
    return True


def _inside(outer: ast.AST, node: ast.AST) -> bool:
    return outer.lineno < node.lineno <= outer.end_lineno


def _distributed_autograd(analysis: Analysis, call: ast.Call) -> bool:
    """`dist_autograd.backward(context_id, [loss])`."""
    return analysis.call_qualname(call) == "torch.distributed.autograd.backward"


def _is_distributed_optimizer(analysis: Analysis, value: ast.AST) -> bool:
    return isinstance(value, ast.Call) and (call_name(value) or "").endswith("DistributedOptimizer")


def _steps_fresh_tensors(analysis: Analysis, loop: LoopInfo, construction: ast.AST) -> bool:
    """The optimizer is built in the loop's body over tensors that every iteration makes anew
    (`x_in = latents.detach().clone()`, then `opt = torch.optim.SGD([x_in], lr=...)`): a new
    tensor starts without a gradient, so nothing accumulates from one step to the next."""
    if not isinstance(construction, ast.Call) or not any(l is loop for l in analysis.context(construction).loops):
        return False
    params = construction.args[0] if construction.args else next(
        (k.value for k in construction.keywords if k.arg == "params"), None)
    if not isinstance(params, (ast.List, ast.Tuple)) or not params.elts:
        return False
    roles = analysis.roles_for(loop.function)
    in_loop = {id(statement) for statement in loop.statements}
    for element in params.elts:
        if not isinstance(element, ast.Name):
            return False
        bindings = roles.assignments.get(element.id, [])
        if not bindings or any(b.unpacked or not _makes_fresh_tensor(b.value) or id(b.statement) not in in_loop
                               for b in bindings):
            return False
    return True


def _makes_fresh_tensor(value: ast.AST | None) -> bool:
    """`x.detach().clone()`, `x.clone().detach()`, `x.detach().requires_grad_()`: a new tensor object."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)):
        return False
    if value.func.attr == "requires_grad_":
        return _makes_fresh_tensor(value.func.value)
    return value.func.attr in ("detach", "clone") and not value.args and not value.keywords


def _known_optimizer(analysis: Analysis, value: ast.AST) -> bool:
    """A `torch.optim` optimizer (or a known optimizer factory), or a module: both have `zero_grad`."""
    return constructed_kind(analysis, value) in ("optimizer", "model")


def _construction(analysis: Analysis, loop: LoopInfo, step: ast.Call, optimizer: str) -> ast.AST | None:
    """What the stepped optimizer was built from (`self.optimizer` from the class's methods)."""
    function = loop.function
    if optimizer.startswith("self.") and optimizer[5:].isidentifier() and function.class_node is not None:
        values = self_attribute_values(analysis, function.class_node).get(optimizer[5:], [])
        return values[0] if len(values) == 1 else None  # `self.optimizer = torch.optim.SGD(...)`
    return construction_of(analysis, function, optimizer, step) if optimizer.isidentifier() else None


def _framework_step(analysis: Analysis, step: ast.Call) -> bool:
    """`self.strategy.optimizer_step(self.optimizer, self.model, self.scheduler)`: an `optimizer_step`
    that is not torch_xla's `xm.optimizer_step(optimizer)` (which only reduces the gradients and
    calls `optimizer.step()`) is a training framework's step, and whether it clears the
    gradients is up to that framework (a DeepSpeed engine's `step()` zeroes them itself)."""
    if call_name(step) != "optimizer_step":
        return False
    return not (analysis.call_qualname(step) or "").startswith("torch_xla.")


def _optimizer_expr(step: ast.Call) -> str:
    """`optimizer` for `optimizer.step()`, for `scaler.step(optimizer)` and for torch_xla's
    `xm.optimizer_step(optimizer)`."""
    target = receiver(step)
    if call_name(step) == "optimizer_step":
        given = step.args[0] if step.args else next((k.value for k in step.keywords if k.arg == "optimizer"), None)
        if given is not None:
            return ast.unparse(given)
    if step.args and call_name(step) == "step" and target is not None:
        name = dotted(target) or ""
        if name.split(".")[-1].lower().endswith("scaler"):
            return ast.unparse(step.args[0])
    return ast.unparse(target) if target is not None else "optimizer"

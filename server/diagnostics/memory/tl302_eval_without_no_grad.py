"""TL302 eval-without-no-grad: flags a model called in an evaluation context — after `model.eval()`
in the same function, or in a `validate`/`evaluate`/`predict`-style function that receives the
model — outside `torch.no_grad()` / `torch.inference_mode()`.
"""
from __future__ import annotations

from typing import Iterator

import ast

from torch_lsp.analysis import (
    Analysis, FunctionInfo, evaluation_after_training, evaluation_model_calls, name_says_evaluation, named_for_evaluation,
    reaches_a_backward, runs_a_wrapper_of, switched_to_eval_before, trainer_model_calls,
)
from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import Finding, Related, Rule
from torch_lsp.diagnostics.correctness.provenance import without_moves


@register
class EvalWithoutNoGrad(Rule):
    """
    ## What it does
    Flags a model called in an evaluation context — after `model.eval()` in the same
    function, or in a `validate`/`evaluate`/`predict`-style function that receives the
    model — outside `torch.no_grad()` / `torch.inference_mode()`. A function decorated with a
    project wrapper of those (`@smart_inference_mode()` defined in the file or imported from
    the workspace) or a block inside a project context manager that enters them counts as
    under `no_grad`, and so does the rest of a `with ExitStack() as stack:` block after
    `stack.enter_context(torch.no_grad())`, and the rest of a function's block after a bare
    `torch.set_grad_enabled(False)` statement (until `torch.set_grad_enabled(True)`). A function never called in the file but handed to
    a call (`run_traced(model, inference_func)`: a callback) runs in whatever context its caller
    sets, and is not flagged, unless it switches the model to eval itself (a `pool.map` worker
    calling `net.eval()`): then no caller is relied on. An evaluation that follows training in the same function
    (`model.eval()`, then a loop, or a comprehension such as `sum(loss(model(x), y) for x, y in
    val_loader)` with no backward or step after it, that runs the model and does not train) is
    flagged too, and so are trainers written as classes (`self.model.eval()` then
    `self.model(x)` in a loop, or an `evaluate`-style method running `self.model`). A model
    frozen first (`model.requires_grad_(False)`, also at the end of calls that return the module,
    `model.eval().requires_grad_(False).to(device)`, or of the chain that builds it,
    `copy.deepcopy(model).requires_grad_(False)`, or `p.requires_grad = False` over its
    parameters or named parameters) records no graph and is not flagged, also a trainer's
    attribute its class freezes wherever it builds it (`self.avg_g = deepcopy(g)`, then
    `p.requires_grad = False` over `self.avg_g.parameters()`), nor is a trainer's attribute bound only to
    an Ultralytics model object (`self.model = YOLO(path)`: its call runs a predictor under
    `torch.inference_mode()`). Nor is an evaluation that differentiates through the model: a
    loop that takes gradients of the input (`torch.autograd.grad(loss, x_adv)`, after
    `requires_grad_()`), or a function that runs an adversarial attack (`adversary.perturb(x,
    y)`, `atk(images, labels)`, `pgd_attack(model, x, y)`), where `no_grad` would break the attack,
    or a pass that also runs a method of an object built around the model (`explainer =
    Generator(model)`, then `explainer.generate_LRP(x)` or a pick from a table of its methods):
    explainers backpropagate through the model. Nor is a trainer's `evaluate`-style method
    that a method of its class computing gradients calls (an agent's `evaluate(state)`
    sampling the action its `update()` backpropagates through).

    ## Why is this bad
    `model.eval()` changes dropout and batch-norm, not autograd: without `no_grad` every
    forward pass still records the graph and keeps its activations, costing memory and
    time for gradients nobody computes.

    ## Example
    ```python
    def validate(model, loader):
        model.eval()
        for x, y in loader:
            out = model(x)
    ```

    ## Use instead
    ```python
    @torch.no_grad()
    def validate(model, loader):
        model.eval()
        for x, y in loader:
            out = model(x)
    ```
    """

    code = "TL302"
    name = "eval-without-no-grad"
    severity = "warning"
    fix_safety = "safe"

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        reported: set[int] = set()
        for function, call, model in evaluation_model_calls(analysis):
            if analysis.context(call).grad_disabled:
                continue
            # After `model.eval()`, only a pass over data (a loop) is surely evaluation: a one-off
            # call in a helper may be part of a differentiable forward.
            over_data = switched_to_eval_before(analysis, function, call, model) and bool(analysis.context(call).loops)
            evaluation = over_data or name_says_evaluation(analysis, function, model)
            if not evaluation or analysis.only_called_without_grad(function) or _frozen_before(function, call, model):
                continue
            if _wrapper_runs_beside(analysis, function, call, model):
                continue
            reported.add(id(call))
            yield self._report(call, model, _eval_call(analysis, function, call, model))
        for function, call, switch in evaluation_after_training(analysis):
            if id(call) not in reported and not analysis.only_called_without_grad(function) \
                    and not _frozen_before(function, call, switch.name) \
                    and not _wrapper_runs_beside(analysis, function, call, switch.name):
                yield self._report(call, switch.name, switch.call)
        for run in trainer_model_calls(analysis):
            context = analysis.context(run.call)
            if context.grad_disabled or analysis.only_called_without_grad(run.function):
                continue
            if _class_freezes(run.function, run.model[len("self."):]):
                continue  # `for p in self.avg_g.parameters(): p.requires_grad = False` where it is built
            if _feeds_a_training_method(analysis, run.function):
                continue  # SAC's `evaluate(state)`: the policy's sample for the loss `update()` backpropagates
            if (run.eval_before is not None and context.loops) or named_for_evaluation(run.function):
                yield self._report(run.call, run.model, run.eval_before)

    def _report(self, call: ast.Call, model: str, eval_call: ast.Call | None) -> Finding:
        message = (
            f"`{model}` is evaluated without `torch.no_grad()`, so every forward pass records the autograd "
            f"graph and keeps activations for gradients nobody computes. Wrap the evaluation in "
            f"`with torch.no_grad():` (or decorate the function with `@torch.no_grad()`)."
        )
        finding = self.finding(call, message, "Wrap the evaluation in `torch.no_grad()`", data={"model": model})
        if eval_call is not None:
            finding.related.append(Related.at(eval_call, f"`{model}` is put in eval mode here"))
        return finding


def _feeds_a_training_method(analysis: Analysis, method: FunctionInfo) -> bool:
    """Another method of the class backpropagates through what this one returns (`action, log_prob
    = self.evaluate(states)` in an agent's `update()`, then `loss = (log_prob - q).mean()` and
    `loss.backward()`): its forward is part of a training step, whatever its name says.  A
    caller that only reports the result (`val_loss = self.test(loader)` after an epoch) does not."""
    cls = method.class_node
    for other in analysis.functions:
        if other.class_node is not cls or other is method or not analysis.computes_gradients(other):
            continue
        for stmt in other.statements:
            if isinstance(stmt, ast.Assign) and _calls_self_method(stmt.value, method.name) and reaches_a_backward(
                    other, {n.id for t in stmt.targets for n in ast.walk(t) if isinstance(n, ast.Name)},
                    (stmt.lineno, stmt.col_offset)):
                return True
    return False


def _calls_self_method(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == name
               and isinstance(n.func.value, ast.Name) and n.func.value.id == "self" for n in ast.walk(node))


def _wrapper_runs_beside(analysis: Analysis, function: FunctionInfo, call: ast.Call, model: str) -> bool:
    """The pass over data that runs `model` (the loop around `call`, else the function) also runs
    an object built around the model, an explainer or an attack that may backpropagate through
    it (`runs_a_wrapper_of`): `no_grad` around the pass could break it."""
    loop = analysis.context(call).loop
    return runs_a_wrapper_of(analysis, function, loop.calls if loop is not None else function.calls, model)


def _frozen_before(function: FunctionInfo, call: ast.Call, model: str) -> bool:
    """`model.requires_grad_(False)` (also at the end of calls that return the module,
    `model.eval().requires_grad_(False).to(device)`), or `p.requires_grad = False` in a loop
    over `model.parameters()` or `model.named_parameters()`, earlier in the function: with no parameter requiring grad (and
    inputs that do not), the forward records no graph."""
    at = (call.lineno, call.col_offset)
    for node in ast.walk(function.node):
        if (getattr(node, "lineno", 0), getattr(node, "col_offset", 0)) >= at:
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "requires_grad_" \
                and _names(without_moves(node.func.value), model) and _turns_grad_off(node):
            return True
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == model for t in node.targets) \
                and _frozen_chain(node.value):
            return True  # `ema_model = copy.deepcopy(model).requires_grad_(False)`
        if isinstance(node, ast.For) and _over_parameters_of(node.iter, model) and any(
                isinstance(flag, ast.Constant) and flag.value is False for flag in _requires_grad_flags(node)):
            return True
    return False


def _class_freezes(function: FunctionInfo, attr: str) -> bool:
    """The class of `function` freezes `self.<attr>` right where it builds it: a method binds it
    fresh and then turns every parameter's grad off (`self.avg_g = deepcopy(g)`, then `for p in
    self.avg_g.parameters(): p.requires_grad = False`, or `self.avg_g.requires_grad_(False)`),
    every other binding in the class only wraps it (`self.avg_g = nn.DataParallel(self.avg_g)`),
    and nothing in the class turns grad back on for it. Its forward records no graph (inputs that
    do not require grad assumed, as for a frozen local model)."""
    cls = function.class_node
    if cls is None:
        return False
    def is_it(node: ast.AST) -> bool:
        return isinstance(node, ast.Attribute) and node.attr == attr and isinstance(node.value, ast.Name) \
            and node.value.id == "self"

    def mentions_it(node: ast.AST) -> bool:
        return any(is_it(n) for n in ast.walk(node))

    frozen_at: dict[str, list[int]] = {}
    built_at: dict[str, list[int]] = {}
    for method in cls.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(method):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "requires_grad_" and is_it(without_moves(node.func.value)):
                if not _turns_grad_off(node):
                    return False
                frozen_at.setdefault(method.name, []).append(node.lineno)
            elif isinstance(node, ast.For) and isinstance(node.iter, ast.Call) \
                    and isinstance(node.iter.func, ast.Attribute) \
                    and node.iter.func.attr in ("parameters", "named_parameters") and is_it(node.iter.func.value):
                flags = _requires_grad_flags(node)
                if any(not (isinstance(f, ast.Constant) and f.value is False) for f in flags):
                    return False
                if flags:
                    frozen_at.setdefault(method.name, []).append(node.lineno)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(is_it(t) for t in targets):
                    if node.value is None or isinstance(node, ast.AugAssign):
                        return False
                    if not mentions_it(node.value) and not (
                            isinstance(node.value, ast.Constant) and node.value.value is None):
                        built_at.setdefault(method.name, []).append(node.lineno)
    # every fresh binding is followed by a freeze in the same method
    return bool(built_at) and all(
        any(freeze > line for freeze in frozen_at.get(name, ())) for name, lines in built_at.items() for line in lines)


def _requires_grad_flags(loop: ast.For) -> list[ast.AST]:
    """The values the loop's body assigns to a parameter's `requires_grad` (`p.requires_grad = False`)."""
    return [s.value for s in loop.body if isinstance(s, ast.Assign)
            and any(isinstance(t, ast.Attribute) and t.attr == "requires_grad" for t in s.targets)]


def _names(node: ast.AST, model: str) -> bool:
    return isinstance(node, ast.Name) and node.id == model


def _turns_grad_off(call: ast.Call) -> bool:
    """`.requires_grad_(False)` / `.requires_grad_(requires_grad=False)`."""
    flag = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "requires_grad"), None)
    return isinstance(flag, ast.Constant) and flag.value is False


def _frozen_chain(value: ast.AST) -> bool:
    """A method chain with `.requires_grad_(False)` in it: `copy.deepcopy(m).requires_grad_(False).eval()`."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        if value.func.attr == "requires_grad_" and _turns_grad_off(value):
            return True
        value = value.func.value
    return False


def _over_parameters_of(iterable: ast.AST, model: str) -> bool:
    """`model.parameters()`, or `model.named_parameters()` (`for k, v in ...: v.requires_grad = False`)."""
    return (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute)
            and iterable.func.attr in ("parameters", "named_parameters") and isinstance(iterable.func.value, ast.Name)
            and iterable.func.value.id == model)


def _eval_call(analysis: Analysis, function: FunctionInfo, call: ast.Call, model: str) -> ast.Call | None:
    """The last `model.eval()` before `call` in the function."""
    before = [s.call for s in analysis.switched(function, model, "eval")
              if (s.call.lineno, s.call.col_offset) < (call.lineno, call.col_offset)]
    return before[-1] if before else None

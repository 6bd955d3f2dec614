"""TL102 missing-train-mode: flags a training loop that runs a model which is switched to eval mode
elsewhere in the file (say, by a `validate()` run every epoch) while nothing switches it back
with `model.train()` on the training path.
"""
from __future__ import annotations

import ast
from functools import partial
from typing import Iterator

from torch_lsp.analysis import (
    Analysis, FunctionInfo, LoopInfo, self_model_switches, switches_to_eval, trainer_model_attribute,
)
from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import Finding, Related, Rule
from torch_lsp.mode_behaviour import attribute_is_mode_independent, named_model_is_mode_independent
from torch_lsp.roles import makes_grad_leaf, reaching_assignment
from torch_lsp.syntax_index import syntax_index
from torch_lsp.syntax_nodes import argument, call_name, loop_header_span, walk_nodes


@register
class MissingTrainMode(Rule):
    """
    ## What it does
    Flags a training loop that runs a model which is switched to eval mode elsewhere in the
    file (say, by a `validate()` run every epoch) while nothing switches it back with
    `model.train()` on the training path.

    ## Why is this bad
    After the first validation the model stays in eval mode: dropout is off and batch-norm
    uses (and stops updating) its running statistics, so the rest of training silently
    trains a different network. An evaluation that puts the model back with `model.train()`
    on every path before it returns (a `validate()` ending in `model.train()`) is not
    flagged; when the training function is called once per epoch, only the calls made
    beside it in that epoch loop are considered. A periodic evaluation inside the training
    loop itself (`for` or `while step < steps:` with `next(it)`), after the model runs, with
    no `model.train()` in the loop, is flagged too (the fix puts `train()` at the top of
    the loop), unless it runs only on the loop's last step (`if i == len(steps) - 1:`), where
    the enclosing epoch loop decides; so is notebook-style code that trains after `model.train()`, evaluates after
    `model.eval()`, then trains again in the same scope with no `model.train()` in between;
    and a trainer class whose method trains `self.model` while another method puts it in
    eval mode between training passes and nothing in the class ever calls `self.model.train()`.
    A `train()` and an `eval()` in the two branches of one `if` (one `run_epoch` serving
    both phases) never run in sequence, so they show no evaluation after training.
    Silent when the model is proven to behave the same in both modes (built only of layers
    such as `Linear`, `Conv2d`, activations and pooling, no dropout or batch norm): there
    eval mode changes nothing; and when every optimizer the loop steps holds only free
    tensors (`SGD([patch])` with `patch = nn.Parameter(...)`): the loop trains an input, such
    as an adversarial patch, against a fixed model whose eval mode is deliberate.

    ## Example
    ```python
    def validate(model, loader):
        model.eval()
        ...

    def train_epoch(model, loader, optimizer):
        for x, y in loader:
            ...
    ```

    ## Use instead
    ```python
    def train_epoch(model, loader, optimizer):
        model.train()
        for x, y in loader:
            ...
    ```
    """

    code = "TL102"
    name = "missing-train-mode"
    severity = "warning"
    fix_safety = "safe"

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        for loop in analysis.innermost_training_loops:
            if not (analysis.backward_calls(loop) or analysis.optimizer_steps(loop)):
                continue
            if _optimizes_only_free_tensors(analysis, loop):
                continue  # an adversarial patch or an image is trained; the model is a fixed function
            reported = False
            roles = analysis.roles_for(loop.function)
            for call in loop.calls:
                model = roles.model_name(call)
                if reported or model is None or analysis.context(call).grad_disabled:
                    continue
                if _trains_other_models(analysis, loop, model):
                    continue  # a frozen model the loop only runs (a teacher, a registration net)
                evaluation = _eval_inside_training(analysis, loop, call, model)
                if evaluation is not None and not named_model_is_mode_independent(analysis, loop.function, model, call):
                    reported = True
                    yield self._inside_report(loop, model, evaluation,
                                              _callee_restores_train_sometimes(analysis, evaluation, model))
                    continue
                evaluation = self._eval_before_training(analysis, loop, model)
                if evaluation is None:
                    continue
                where, inside_epoch, evaluating = evaluation
                in_scope = analysis.context(evaluating).function is loop.function and not inside_epoch
                # An eval earlier in the loop's own scope was found with no train() after it.
                if not in_scope and self._train_on_path(analysis, loop, model, inside_epoch, evaluating):
                    continue
                if named_model_is_mode_independent(analysis, loop.function, model, call):
                    continue  # no dropout, no batch norm: eval mode changes nothing
                message = (
                    f"`{model}` is put in eval mode {where}, but nothing calls `{model}.train()` before this "
                    f"training loop, so dropout and batch-norm stay in eval mode after the first evaluation. "
                    f"Call `{model}.train()` before the loop."
                )
                reported = True
                finding = self.finding_at(
                    loop_header_span(loop.node), message, f"Insert `{model}.train()` before the loop",
                    data={"model": model, "inside_epoch": inside_epoch},
                )
                finding.related.append(Related.at(evaluating, f"`{model}` is put in eval mode here"))
                yield finding

        yield from self._trainer_reports(analysis)

    def _trainer_reports(self, analysis: Analysis) -> Iterator[Finding]:
        """Trainer classes: a method trains `self.model`, another puts it in eval mode, nothing in
        the class ever puts it back in train mode, and the evaluation can run before a training
        pass (the training method has no caller here, or its caller's loop also evaluates)."""
        for loop in analysis.innermost_training_loops:
            if not (analysis.backward_calls(loop) or analysis.optimizer_steps(loop)):
                continue
            for call in loop.calls:
                attr = trainer_model_attribute(analysis, loop.function, call)
                if attr is None or analysis.context(call).grad_disabled:
                    continue
                switches = self_model_switches(analysis, loop.function.class_node, attr)
                if any(mode == "train" or method is loop.function for method, _, mode in switches):
                    break  # the class manages the model's mode
                evaluating = next(((method, c) for method, c, _ in switches), None)
                if attribute_is_mode_independent(analysis, loop.function.class_node, attr):
                    break  # no dropout, no batch norm: eval mode changes nothing
                if evaluating is not None and _evaluated_before_pass(analysis, loop.function, evaluating[0]):
                    yield self._trainer_report(loop, f"self.{attr}", *evaluating)
                break

    def _trainer_report(self, loop: LoopInfo, model: str, method: FunctionInfo, evaluating: ast.Call) -> Finding:
        message = (
            f"`{model}` is put in eval mode in `{method.name}()` (line {evaluating.lineno}), but nothing in the class "
            f"calls `{model}.train()`, so this training loop runs with dropout and batch-norm in eval mode after "
            f"the first evaluation. Call `{model}.train()` before the loop."
        )
        finding = self.finding_at(loop_header_span(loop.node), message, f"Insert `{model}.train()` before the loop",
                                  data={"model": model, "inside_epoch": False})
        finding.related.append(Related.at(evaluating, f"`{model}` is put in eval mode here"))
        return finding

    def _inside_report(self, loop: LoopInfo, model: str, evaluating: ast.Call, restored_sometimes: bool) -> Finding:
        # A callee that switches back on some paths only (`model.train()` under an `if`) would
        # make "nothing calls train()" read as wrong: say which paths leave it in eval mode.
        restored = (f", which switches it back to train mode only on some paths, and nothing else in the loop calls "
                    f"`{model}.train()`, so every step after an evaluation that takes another path"
                    if restored_sometimes else
                    f", and nothing in the loop calls `{model}.train()`, so every step after the first evaluation")
        message = (
            f"`{model}` is put in eval mode by `{ast.unparse(evaluating.func)}()` (line {evaluating.lineno}) inside "
            f"this training loop{restored} trains with dropout and batch-norm in eval mode. Call `{model}.train()` at "
            f"the top of the loop."
        )
        finding = self.finding_at(loop_header_span(loop.node), message,
                                  f"Insert `{model}.train()` at the top of the loop",
                                  data={"model": model, "inside_epoch": False, "inside_loop": True})
        finding.related.append(Related.at(evaluating, f"`{model}` is put in eval mode here"))
        return finding

    def _eval_before_training(self, analysis: Analysis, loop: LoopInfo, model: str):
        """Where `model` can be switched to eval before the loop runs again, or None."""
        # An enclosing (epoch) loop evaluates the model between training passes.
        ancestor = loop.parent
        while ancestor is not None:
            for call in ancestor.calls:
                if switches_to_eval(analysis, call, model) and not _callee_restores_train(analysis, call, model) \
                        and not _built_anew_before(analysis, ancestor, loop, model, call):
                    return f"by `{ast.unparse(call.func)}()` (line {call.lineno}) inside the enclosing loop", True, call
            ancestor = ancestor.parent
        function = loop.function
        evaluated = _evaluated_after_training_mode(analysis, loop, model)
        if evaluated is not None:
            where = "at module level" if function.is_module else "in this function"
            return f"earlier {where} (line {evaluated.lineno})", False, evaluated
        if function.is_module or analysis.switched(function, model, "eval"):
            return None  # eval in the same function before training: deliberate (frozen BN) or not ours
        if model not in function.params:
            return None  # built here, so it starts in train mode
        # A per-epoch training function: validated elsewhere between calls.
        callers = analysis.callers(function)
        if callers and not any(analysis.context(c).loops for c in callers):
            return None
        if callers:
            # Called once per epoch: what the epoch loops call between training passes decides.
            return _evaluated_beside(analysis, function, callers, model)
        # Not called in this file: any function of the file switching a model of that name to
        # eval may run between its calls (a fact of the whole file, not of this function's part).
        for node, call, owner in analysis.file_fact(("TL102 eval switches of", model),
                                                    partial(_eval_switches_of, model=model)):
            if node is not function.node:
                return f"in {owner} (line {call.lineno})", False, call
        return None

    def _train_on_path(self, analysis: Analysis, loop: LoopInfo, model: str, inside_epoch: bool,
                       evaluating: ast.Call) -> bool:
        """`model.train()` runs again after each evaluation, before the loop trains."""
        function = loop.function
        if inside_epoch:
            # Evaluated inside an enclosing loop: a `train()` before that loop runs only once, and so
            # does one in a loop further out (`model.train()` per fold, `model.eval()` per epoch).
            outer = loop.parent
            while outer is not None:
                if any(_switches_to_train(analysis, c, model) for c in outer.calls):
                    return True
                if any(c is evaluating for c in outer.calls):
                    return False
                outer = outer.parent
            return False
        if analysis.switched(function, model, "train"):
            return True
        for caller in analysis.callers(function):
            owner = analysis.context(caller).function
            if any(s.mode == "train" for s in analysis.mode_switches.get(owner, ())):
                return True
        return False


def _built_anew_before(analysis: Analysis, ancestor: LoopInfo, loop: LoopInfo, model: str, evaluating: ast.Call) -> bool:
    """The enclosing loop binds `model` afresh before the training loop, from something other than
    itself (`learner = type(model)()`, `net = Net()`, `learner = copy.deepcopy(meta_model)`), and
    puts it in eval mode only after that training loop: each iteration trains a new module, which
    starts in train mode, and the one switched to eval is dropped (MAML's per-task learners,
    a model built per fold)."""
    start = (loop.node.lineno, loop.node.col_offset)
    if (evaluating.lineno, evaluating.col_offset) < start:
        return False
    inside = {id(s) for s in ancestor.statements}
    trained = {id(s) for s in loop.statements}
    for assignment in analysis.roles_for(loop.function).assignments.get(model, ()):
        stmt = assignment.statement
        if id(stmt) not in inside or id(stmt) in trained or (stmt.lineno, stmt.col_offset) >= start:
            continue
        if assignment.value is None or assignment.unpacked or isinstance(stmt, (ast.For, ast.AsyncFor, ast.AugAssign)):
            continue
        if not any(isinstance(n, ast.Name) and n.id == model for n in walk_nodes(assignment.value)):
            return True
    return False


def _eval_switches_of(analysis: Analysis, model: str) -> tuple[tuple[ast.AST | None, ast.Call, str], ...]:
    """(the function's node, None at module level; the `eval()` call; where, in words) of each
    switch of `model` to eval mode that its function does not undo, in the whole file."""
    found = []
    for other, switches in analysis.mode_switches.items():
        if _constructor_of_unrelated_object(analysis, other, model):
            continue
        for switch in switches:
            if switch.name == model and switch.mode == "eval" and not _restores_train(analysis, other, switch):
                owner = "module level" if other.is_module else f"`{other.name}()`"
                found.append((None if other.is_module else other.node, switch.call, owner))
    return tuple(found)


def _optimizes_only_free_tensors(analysis: Analysis, loop: LoopInfo) -> bool:
    """Every optimizer the loop steps is built over a list of free tensors, not a model's
    parameters (`SGD([patch])` with `patch = nn.Parameter(...)`): the loop optimises an input
    (an adversarial patch, an image), and the model it runs is a fixed function whose eval
    mode is deliberate."""
    steps = analysis.optimizer_steps(loop)
    return bool(steps) and all(_free_tensor_optimizer(analysis, step) for step in steps)


def _trains_other_models(analysis: Analysis, loop: LoopInfo, model: str) -> bool:
    """Every optimizer the loop steps is built over named models' `.parameters()`, one of them
    runs in the loop, and `model` is none of them (`optimizer_seg = Adam(seg_net.parameters())`
    while `reg_net` only produces inputs): the loop trains another model, so `model`'s mode
    is not this loop's business."""
    steps = analysis.optimizer_steps(loop)
    if not steps:
        return False
    optimized: set[str] = set()
    for step in steps:
        names = _optimized_models(analysis, step)
        if not names:
            return False  # parameters the file does not show: `model` may be among them
        optimized |= names
    roles = analysis.roles_for(loop.function)
    runs = {roles.model_name(call) for call in loop.calls}
    return model not in optimized and bool(optimized & runs)


def _optimized_models(analysis: Analysis, step: ast.Call) -> set[str]:
    """The models whose `.parameters()` the stepped optimizer is built over (`opt.step()`,
    `scaler.step(opt)`); empty when it holds anything else or is not a `torch.optim` one."""
    func = step.func
    params = _optimizer_params(analysis, step.args[0] if step.args else func.value if isinstance(func, ast.Attribute)
                               else None)
    if not (isinstance(params, ast.Call) and isinstance(params.func, ast.Attribute)
            and params.func.attr == "parameters" and isinstance(params.func.value, ast.Name)):
        return set()
    return {params.func.value.id}


def _free_tensor_optimizer(analysis: Analysis, step: ast.Call) -> bool:
    params = _optimizer_params(analysis, step.func.value if isinstance(step.func, ast.Attribute) else None)
    return (isinstance(params, (ast.List, ast.Tuple)) and bool(params.elts)
            and all(isinstance(p, ast.Name) and _free_tensor(analysis, p) for p in params.elts))


def _optimizer_params(analysis: Analysis, optimizer: ast.AST | None) -> ast.AST | None:
    """What the `torch.optim` optimizer the name holds was built over (its `params` argument),
    when a plain assignment that surely ran builds it; else None."""
    built = reaching_assignment(analysis, optimizer) if isinstance(optimizer, ast.Name) else None
    value = built.value if built is not None else None
    if not (isinstance(value, ast.Call) and (analysis.call_qualname(value) or "").startswith("torch.optim.")):
        return None
    return argument(value, 0, "params")


def _free_tensor(analysis: Analysis, name: ast.Name) -> bool:
    """`name` is bound to a leaf tensor that requires grad (`nn.Parameter(...)`, a `torch.*`
    tensor made with `requires_grad=True`)."""
    built = reaching_assignment(analysis, name)
    return makes_grad_leaf(analysis, built.value if built is not None else None)


def _eval_inside_training(analysis: Analysis, loop: LoopInfo, model_call: ast.Call, model: str) -> ast.Call | None:
    """A periodic evaluation inside the training loop itself (`if step % 500 == 0: validate(model)`,
    also in `while step < steps:` loops fed by `next(it)`): the eval switch comes after the
    model runs in the body, and nothing in the loop switches back to train, so the next
    iterations train in eval mode."""
    if any(_switches_to_train(analysis, c, model) for c in loop.calls):
        return None
    for call in loop.calls:
        if (call.lineno, call.col_offset) <= (model_call.lineno, model_call.col_offset):
            continue
        if _on_last_iteration_only(analysis, loop, call):
            continue  # no later step of this loop trains after it; the enclosing loop decides
        if switches_to_eval(analysis, call, model) and not _callee_restores_train(analysis, call, model):
            return call
    return None


def _on_last_iteration_only(analysis: Analysis, loop: LoopInfo, call: ast.Call) -> bool:
    """`call` runs under `if i == len(steps) - 1:` (or `i + 1 == len(steps)`) inside the loop,
    `i` being the loop's index (`for i, batch in enumerate(loader)`): only on the last step, so
    it leaves no later step of this loop in eval mode."""
    if not isinstance(loop.node, ast.For):
        return False
    target = loop.node.target
    indices = {e.id for e in (target.elts if isinstance(target, ast.Tuple) else [target]) if isinstance(e, ast.Name)}
    inside = {id(stmt) for stmt in loop.statements}
    return any(in_body and id(stmt) in inside and _is_last_index_test(stmt.test, indices)
               for stmt, in_body in analysis.context(call).guards)


def _is_last_index_test(test: ast.expr, indices: set[str]) -> bool:
    """`i == len(x) - 1`, `i + 1 == len(x)`, either side first."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = (test.left, test.comparators[0])
    return any(_offset_from(one, indices) is not None and _offset_from(other, indices) is None
               and _len_offset(other) == _offset_from(one, indices) - 1
               for one, other in (sides, sides[::-1]))


def _offset_from(node: ast.expr, indices: set[str]) -> int | None:
    """0 for the index `i`, 1 for `i + 1`; None for anything else."""
    if isinstance(node, ast.Name) and node.id in indices:
        return 0
    if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and isinstance(node.left, ast.Name)
            and node.left.id in indices and isinstance(node.right, ast.Constant) and node.right.value == 1):
        return 1
    return None


def _len_offset(node: ast.expr) -> int | None:
    """-1 for `len(x) - 1`, 0 for `len(x)`; None for anything else."""
    def is_len(n):
        return isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "len" and len(n.args) == 1
    if is_len(node):
        return 0
    if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub) and is_len(node.left)
            and isinstance(node.right, ast.Constant) and node.right.value == 1):
        return -1
    return None


def _evaluated_before_pass(analysis: Analysis, training: FunctionInfo, evaluation: FunctionInfo) -> bool:
    """The evaluating method can run before a pass of the training method: nothing here calls
    the training method (others call it between evaluations), or a loop that calls it also
    calls the evaluating method (an epoch loop)."""
    callers = analysis.callers(training)
    if not callers:
        return True
    for site in callers:
        loops = analysis.context(site).loops
        if loops and any(call_name(c) == evaluation.name for c in loops[-1].calls if c is not site):
            return True
    return False


def _evaluated_after_training_mode(analysis: Analysis, loop: LoopInfo, model: str) -> ast.Call | None:
    """Notebook-style code: in the loop's own scope, `model.train()`, later `model.eval()` (a
    validation cell), then this training loop with no `model.train()` in between. The earlier
    `train()` shows the switch to eval is an evaluation, not a deliberate freeze for training."""
    start = (loop.node.lineno, loop.node.col_offset)
    before = [s for s in analysis.mode_switches.get(loop.function, ())
              if s.name == model and (s.call.lineno, s.call.col_offset) < start]
    before.sort(key=lambda s: (s.call.lineno, s.call.col_offset))
    if len(before) < 2 or before[-1].mode != "eval":
        return None
    evaluating = before[-1].call
    if not any(s.mode == "train" and not _exclusive_branches(analysis, s.call, evaluating) for s in before[:-1]):
        return None  # `if phase == "train": model.train()` / `else: model.eval()`: one or the other
    return evaluating


def _exclusive_branches(analysis: Analysis, one: ast.AST, other: ast.AST) -> bool:
    """`one` and `other` sit in the two branches of the same `if`, or the two arms of the same
    conditional expression (`model.train() if is_train else model.eval()`): never both run."""
    branch_of = {id(if_stmt): in_body for if_stmt, in_body in analysis.context(one).guards}
    if any(id(if_stmt) in branch_of and branch_of[id(if_stmt)] != in_body
           for if_stmt, in_body in analysis.context(other).guards):
        return True
    arm_of = dict(_conditional_arms(analysis, one))
    return any(choice in arm_of and arm_of[choice] != arm for choice, arm in _conditional_arms(analysis, other))


def _conditional_arms(analysis: Analysis, node: ast.AST) -> Iterator[tuple[int, bool]]:
    """(id of a conditional expression holding `node`, True in its `body` arm), up to the
    statement holding `node`."""
    parent_of = syntax_index(analysis).parent_of
    child, parent = node, parent_of(node)
    while parent is not None and not isinstance(child, ast.stmt):
        if isinstance(parent, ast.IfExp) and child is not parent.test:
            yield id(parent), child is parent.body
        child, parent = parent, parent_of(parent)


def _evaluated_beside(analysis: Analysis, function, callers: list[ast.Call], param: str):
    """A call in a caller's loop that leaves the model passed for `param` in eval mode."""
    for site in callers:
        passed = analysis.argument_for(site, function, param)
        if not isinstance(passed, ast.Name) or not analysis.context(site).loops:
            continue
        for call in analysis.context(site).loops[-1].calls:
            if call is not site and switches_to_eval(analysis, call, passed.id) \
                    and not _callee_restores_train(analysis, call, passed.id):
                return f"by `{ast.unparse(call.func)}()` (line {call.lineno}) between training passes", False, call
    return None


def _restores_train(analysis: Analysis, function, switch) -> bool:
    """`validate()` ends with `model.train()`: a later switch back to train mode at the top
    level of the function (not under an `if`, a loop or a `try`), so it runs on every path;
    or later in the block that switches to eval, with nothing in between that can leave it
    (`net.eval(); acc += score(net(x)); net.train()` around each batch): whenever the
    switch to eval runs, so does the switch back."""
    return any(
        (other.call.lineno, other.call.col_offset) > (switch.call.lineno, switch.call.col_offset)
        and (_on_every_path(analysis, other.call) or _follows_in_block(analysis, switch.call, other.call))
        for other in analysis.switched(function, switch.name, "train")
    )


def _follows_in_block(analysis: Analysis, first: ast.Call, then: ast.Call) -> bool:
    """`then` is a statement of the block holding `first`'s statement, after it, and no
    statement from `first` up to `then` can leave the block (`return`, `break`, `continue`,
    `raise`)."""
    start, end = analysis.statement_of(first), analysis.statement_of(then)
    block = analysis.block_of(start) if start is not None else None
    if block is None or not any(s is end for s in block):
        return False
    between = block[block.index(start):block.index(end)]
    return not any(isinstance(node, (ast.Return, ast.Break, ast.Continue, ast.Raise))
                   for stmt in between for node in walk_nodes(stmt))


def _on_every_path(analysis: Analysis, call: ast.Call) -> bool:
    parent = analysis.parents.get(analysis.statement_of(call))
    while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
        if not isinstance(parent, (ast.With, ast.AsyncWith)):
            return False
        parent = analysis.parents.get(parent)
    return True


def _callee_restores_train(analysis: Analysis, call: ast.Call, model: str) -> bool:
    """`validate(model)` whose body switches its parameter to eval and back to train."""
    for function in analysis.function_named(call_name(call) or ""):
        for param in function.params:
            arg = analysis.argument_for(call, function, param)
            if isinstance(arg, ast.Name) and arg.id == model:
                evals = analysis.switched(function, param, "eval")
                if evals and all(_restores_train(analysis, function, e) for e in evals):
                    return True
    return False


def _callee_restores_train_sometimes(analysis: Analysis, call: ast.Call, model: str) -> bool:
    """`generate_example(model)` whose body switches its parameter back to train mode, though
    not on every path (`model.train()` inside an `if`)."""
    return any(
        analysis.switched(function, param, "train")
        for function in analysis.function_named(call_name(call) or "")
        for param in function.params
        if isinstance(arg := analysis.argument_for(call, function, param), ast.Name) and arg.id == model
    )


def _callee_switches_to_train(analysis: Analysis, call: ast.Call, model: str) -> bool:
    """`call` runs a function of the file that puts the parameter `model` is passed for in
    train mode on every path through it, and never in eval mode (`swap_training(net, frozen)`;
    a `validate(model)` that switches to eval and back is an evaluation, not a switch to train)."""
    for function in analysis.function_named(call_name(call) or ""):
        for param in function.params:
            arg = analysis.argument_for(call, function, param)
            if isinstance(arg, ast.Name) and arg.id == model and not analysis.switched(function, param, "eval") and any(
                    _on_every_path(analysis, switch.call) for switch in analysis.switched(function, param, "train")):
                return True
    return False


def _switches_to_train(analysis: Analysis, call: ast.Call, model: str) -> bool:
    """`model.train()`, also at the end of a chain (`model.to(device).train()`), or a method of
    the model's class that puts it (or the part that trains) in train mode (`model.train_head()`),
    or a function of the file given `model` for a parameter it always puts in train mode
    (`swap_training(seg_net, reg_net)` ending with `network_to_train.train()`)."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and (func.attr == "train" or analysis.custom_mode_of(call) == "train")):
        return _callee_switches_to_train(analysis, call, model)
    if call.args and isinstance(call.args[0], ast.Constant) and call.args[0].value is False:
        return False
    target = func.value
    while isinstance(target, ast.Call) and isinstance(target.func, ast.Attribute) and target.func.attr in (
            "to", "cuda", "cpu"):
        target = target.func.value
    return isinstance(target, ast.Name) and target.id == model


def _constructor_of_unrelated_object(analysis: Analysis, function: FunctionInfo, model: str) -> bool:
    """`__init__` of a class (an inference worker storing `self.model = model.eval()`) that
    nothing in the file builds around `model`: its `model` parameter is whatever its builder
    passes, not the model this file trains, so its eval() says nothing about the training."""
    cls = function.class_node
    if cls is None or function.name != "__init__" or model not in function.params:
        return False
    return not any(
        call_name(call) == cls.name and any(isinstance(a, ast.Name) and a.id == model
                                            for a in (*call.args, *(k.value for k in call.keywords)))
        for call in analysis.calls)

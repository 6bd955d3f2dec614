"""TL401 sync-in-training-loop: flags `.item()`, `.cpu()`, `.numpy()` and `.tolist()` on a tensor
in every iteration of a training loop (not under a periodic `if step % N == 0:`), in code that
runs on a GPU.
"""
from __future__ import annotations

import ast
from typing import Iterator

from torch_lsp.analysis import Analysis, is_cpu_device, trainer_model_attribute
from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import Finding, Rule
from torch_lsp.diagnostics.correctness.provenance import followed
from torch_lsp.roles import dominates
from torch_lsp.syntax_nodes import call_name, iterated_source, keyword, mentions_any, method_span, node_key, receiver, walk_nodes


_SYNC_METHODS = ("item", "cpu", "numpy", "tolist")
# Factories that make their tensor in host memory unless given a `device=`.
_HOST_FACTORIES = {"rand", "randn", "randint", "randperm", "zeros", "ones", "full", "arange", "empty"}


def _made_on_host(analysis: Analysis, target: ast.AST) -> bool:
    """`torch.randint(0, 5, (1,)).item()`, `perm = torch.randperm(n)`: a CPU tensor (no
    `device=` and no default device set in the file, or a literal `device="cpu"`) reads
    without waiting for the GPU."""
    value, bound = followed(analysis, target)
    if bound is None and isinstance(target, ast.Name):
        value = _value_kept_in_place(analysis, target)
    if not isinstance(value, ast.Call):
        return False
    device = keyword(value, "device")
    if device is not None and not is_cpu_device(analysis, device.value):
        return False
    qualname = analysis.call_qualname(value) or ""
    module, _, function = qualname.rpartition(".")
    if not (module == "torch" and function in _HOST_FACTORIES):
        return False
    # `device="cpu"` says where the tensor lives whatever default device the file sets
    return device is not None or not analysis.file_fact("sets a default device", _sets_default_device)


def _runs_before_any_move(analysis: Analysis, call: ast.Call, loop) -> bool:
    """Every run of the loop comes, in the file's order, before its first move of anything to
    an accelerator: the loop is at module level above that move, or its function is called
    only from module level, above it (a notebook's first `training_loop(model=Net(), ...)` on
    the CPU, whose GPU version with `.to(device)` follows cells later).  Nothing the loop
    touches is on a GPU yet, so its syncs wait for nothing."""
    if analysis.framework_places_on_accelerator:
        return False
    function = analysis.context(call).function
    if function.is_module:
        runs = [loop.node]  # a move inside the loop (`x.to(device)`) runs with it: it ends before the move
    else:
        sites = analysis.callers(function)
        if not sites or any(not analysis.context(site).function.is_module for site in sites):
            return False
        # A notebook may define the function anew further down (its GPU version): a call runs
        # the last definition of the name above it.
        definitions = [f for f in analysis.function_named(function.name) if not f.is_method]
        runs = [site for site in sites
                if max((f for f in definitions if f.node.lineno < site.lineno), key=lambda f: f.node.lineno,
                       default=None) is function]
        if not runs:
            return False
        runs.append(function.node)  # nor may the function itself move anything
    first = analysis.file_fact("first move to an accelerator", _first_move_line)
    return first is not None and all(run.end_lineno < first for run in runs)


def _first_move_line(analysis: Analysis) -> int | None:
    """The line of the file's first `.cuda()` / `.to(<accelerator>)`, or of a default device set."""
    lines = [c.lineno for c in analysis.iter_calls("cuda", "to") if analysis._moves_to_device(c, False)]
    lines += [c.lineno for c in analysis.calls_to("torch.set_default_device")]
    return min(lines, default=None)


def _sets_default_device(analysis: Analysis) -> bool:
    return bool(analysis.calls_to("torch.set_default_device"))


def _made_on_device(analysis: Analysis, target: ast.AST) -> bool:
    """`t = torch.randint(0, T, (B,), device=images.device)`: a factory given a device other
    than a literal CPU one makes its tensor where the code runs, on the GPU."""
    value, _ = followed(analysis, target)
    if not isinstance(value, ast.Call):
        return False
    device = keyword(value, "device")
    qualname = analysis.call_qualname(value) or ""
    module, _, function = qualname.rpartition(".")
    return module == "torch" and function in _HOST_FACTORIES and device is not None and "cpu" not in ast.unparse(device)


def _value_kept_in_place(analysis: Analysis, target: ast.Name) -> ast.AST | None:
    """`step = torch.zeros(())` then only `step += 1`: an augmented assignment updates the
    tensor in place, on the device it was made on, so the one plain binding still says where
    the name's tensor lives."""
    assignments = analysis.roles_for(target).assignments.get(target.id, ())
    if not assignments or not all(isinstance(a.statement, ast.AugAssign) for a in assignments[1:]):
        return None
    first = assignments[0]
    use = analysis.statement_of(target)
    if not isinstance(first.statement, ast.Assign) or first.unpacked or use is None \
            or not dominates(analysis, first.statement, use):
        return None
    return first.value


def _unwrapped(target: ast.AST) -> ast.AST:
    """`loss.data`, `loss.detach()`: the same tensor, where it lives unchanged."""
    while True:
        if isinstance(target, ast.Attribute) and target.attr == "data":
            target = target.value
        elif isinstance(target, ast.Call) and call_name(target) == "detach" and not target.args:
            target = receiver(target)
        else:
            return target


def _host_copy(node: ast.AST) -> bool:
    """A sync's result (`x.cpu()`, `x.numpy()`): already on the host."""
    return isinstance(node, ast.Call) and call_name(node) in _SYNC_METHODS and receiver(node) is not None


def _bound_to_host_copy(analysis: Analysis, target: ast.AST) -> bool:
    """`loss = criterion(out, y).cpu()`, then `loss.item()`: the name holds the host copy the
    `.cpu()` made (that sync is reported where it happens), so reading it waits for nothing."""
    if not isinstance(target, ast.Name):
        return False
    value, bound = followed(analysis, target)
    return bound is not None and _host_copy(_unwrapped(value))


def _guarded_by_modulo(analysis: Analysis, node: ast.AST) -> bool:
    """An enclosing `if step % 100 == 0:` (alone or joined with `and`) makes it periodic, and
    so does a flag bound to such a test (`regularize = i % every == 0` ... `if regularize:`)."""
    context = analysis.context(node)
    counters: set[str] | None = None
    for if_stmt, in_body in context.guards:
        if not in_body:
            continue
        if tests_modulo(if_stmt.test, lambda name: followed(analysis, name)[0],
                         lambda call: _modulo_predicate(analysis, call)) or _throttled(if_stmt):
            return True
        if _flag_set_on_few_steps(analysis, if_stmt.test, node):
            return True
        if counters is None:
            counters = {n.id for loop in context.loops if isinstance(loop.node, (ast.For, ast.AsyncFor))
                        for n in ast.walk(loop.node.target) if isinstance(n, ast.Name)}
        if _selected_steps(if_stmt.test, counters):
            return True
    return False


def _flag_set_on_few_steps(analysis: Analysis, test: ast.AST, node: ast.AST) -> bool:
    """`if plot:` where the loop clears the flag each iteration (`plot = False`) and sets it
    only under a periodic or one-off test (`if epoch % plot_freq == 0 and i == 0: plot =
    True`, recurrent-visual-attention): the branch runs on the steps that test picks."""
    loop = analysis.context(node).loop
    if not isinstance(test, ast.Name) or loop is None:
        return False
    inside = {id(stmt) for stmt in loop.statements}
    at_loop_level = len(analysis.context(loop.node).guards)
    cleared = False
    for assignment in analysis.roles_for(node).assignments.get(test.id, ()):
        statement, value = assignment.statement, assignment.value
        if not (isinstance(statement, ast.Assign) and isinstance(value, ast.Constant)):
            return False  # bound to something else: it may hold on any step
        guards = analysis.context(statement).guards
        if not value.value:
            cleared = cleared or (id(statement) in inside and len(guards) == at_loop_level)
        elif id(statement) not in inside or not any(
                in_body and (tests_modulo(guard.test) or _one_off(guard.test)) for guard, in_body in guards[at_loop_level:]):
            return False  # set outside the loop, or on steps no periodic or one-off test picks
    return cleared


def _selected_steps(test: ast.AST, counters: set[str]) -> bool:
    """`if i in np.linspace(0, iterations, 10, dtype=int):`, `if step in log_steps:`: a loop's
    counter tested against a fixed set of steps (not a `range`, which may hold them all), alone
    or joined with `and`: the branch runs on those steps only."""
    tests = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    return any(isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.In)
               and isinstance(t.left, ast.Name) and t.left.id in counters
               and not (isinstance(t.comparators[0], ast.Call) and call_name(t.comparators[0]) == "range")
               for t in tests)


def _modulo_predicate(analysis: Analysis, call: ast.Call) -> bool:
    """`divisible_by(step, every)` where every function of the file so named only returns a
    `%` test (`return (num % den) == 0`): the helper spelling of `step % every == 0`."""
    if not isinstance(call.func, ast.Name):
        return False
    functions = analysis.function_named(call.func.id)
    return bool(functions) and all(
        len(f.node.body) == 1 and isinstance(f.node.body[0], ast.Return) and f.node.body[0].value is not None
        and tests_modulo(f.node.body[0].value) for f in functions)


def _throttled(if_stmt: ast.If) -> bool:
    """`if now - last_logging > args.log_freq_time:` whose body sets `last_logging = now`:
    the branch runs once per interval (of time or steps), not every step."""
    tests = if_stmt.test.values if isinstance(if_stmt.test, ast.BoolOp) and isinstance(if_stmt.test.op, ast.And) \
        else [if_stmt.test]
    rebound = {target.id for stmt in if_stmt.body if isinstance(stmt, ast.Assign)
               for target in stmt.targets if isinstance(target, ast.Name)}
    return any(isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Gt, ast.GtE))
               and isinstance(test.left, ast.BinOp) and isinstance(test.left.op, ast.Sub)
               and isinstance(test.left.right, ast.Name) and test.left.right.id in rebound
               for test in tests)


def _after_explicit_synchronize(analysis: Analysis, call: ast.Call, loop) -> bool:
    """`torch.cuda.synchronize()` as a statement of the loop's own body (run on every
    iteration), or of an `if` there that only asks whether the code runs on CUDA
    (`if device_type == "cuda":`), before the statement holding `call`: the host already
    waits for the GPU there, so the sync costs nothing more (the stall is the explicit one,
    chosen on purpose, as when each step is timed)."""
    stmt = analysis.body_statement(loop.node, call)
    if stmt is None:
        return False
    for earlier in loop.node.body:
        if earlier is stmt:
            return False
        if _synchronizes(analysis, earlier) or (isinstance(earlier, ast.If) and _asks_for_cuda(analysis, earlier.test)
                                                and any(_synchronizes(analysis, s) for s in earlier.body)):
            return True
    return False


def _synchronizes(analysis: Analysis, stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
        and analysis.call_qualname(stmt.value) == "torch.cuda.synchronize"


def _asks_for_cuda(analysis: Analysis, test: ast.AST) -> bool:
    """`device_type == "cuda"`, `device.type == "cuda"`, `"cuda" in device`,
    `str(device).startswith("cuda")`, `torch.cuda.is_available()`: true wherever the GPU
    this rule is about is used (a negated or combined test is not)."""
    def is_cuda(node: ast.AST) -> bool:
        return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("cuda")

    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        if isinstance(test.ops[0], ast.Eq):
            return is_cuda(test.left) or is_cuda(test.comparators[0])
        return isinstance(test.ops[0], ast.In) and is_cuda(test.left)
    if isinstance(test, ast.Call):
        if analysis.call_qualname(test) == "torch.cuda.is_available":
            return True
        return call_name(test) == "startswith" and len(test.args) == 1 and is_cuda(test.args[0])
    return False


def _decides_an_exit(analysis: Analysis, call: ast.Call) -> bool:
    """The value decides an `if` whose body leaves the loop or the run: a NaN guard that stops
    training (`if not math.isfinite(loss.item()): sys.exit(1)`) or an early stop (`loss_value =
    loss.item()`, then `if loss_value < eps: break` later in the same block).  The host must
    read it every step, by design."""
    def leaves(if_stmt: ast.If) -> bool:
        return bool(if_stmt.body) and _leaves(if_stmt.body[-1], if_stmt)

    stmt = analysis.statement_of(call)
    if isinstance(stmt, ast.If) and leaves(stmt) and any(node is call for node in walk_nodes(stmt.test)):
        return True
    if not (isinstance(stmt, ast.Assign) and stmt.value is call and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)):
        return False
    name = stmt.targets[0].id
    block = analysis.block_of(stmt) or []
    later = block[block.index(stmt) + 1:] if stmt in block else []
    return any(isinstance(s, ast.If) and leaves(s) and mentions_any(s.test, {name}) for s in later)


def _decides_while_loop(analysis: Analysis, call: ast.Call, loop: ast.AST) -> bool:
    """`score = -loss.item()` in a `while score < 0.99:` loop: the value is the loop's own
    stopping test, read on the host every iteration by design."""
    if not isinstance(loop, ast.While):
        return False
    stmt = analysis.statement_of(call)
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and any(node is call for node in walk_nodes(stmt.value))):
        return False
    name = stmt.targets[0].id
    return any(isinstance(node, ast.Name) and node.id == name for node in walk_nodes(loop.test))


# Builtins that only convert the host value a sync returned: `int(action.item())`.
_HOST_CONVERSIONS = {"int", "float", "bool"}
# An environment's step returns at least (observation, reward, done): what it is unpacked into.
_TRANSITION_SIZE = 3


def _sent_to_environment(analysis: Analysis, call: ast.Call, loop: ast.AST) -> bool:
    """The host value is the action handed to an environment's step: `env.step(action.item())`,
    or `action = q(obs).argmax().item()` and later in the loop `obs, reward, done, info =
    env.step(action)`.  The environment runs on the host and needs the action before it can
    go on, so the sync is the interaction itself, not a stall the step could avoid."""
    value = call
    parent = analysis.parents.get(value)
    while True:  # `action.cpu().numpy()[0]`, `int(action.item())`: still the action
        if isinstance(parent, ast.Subscript) and parent.value is value:
            value = parent
        elif isinstance(parent, ast.Attribute) and isinstance(analysis.parents.get(parent), ast.Call) \
                and analysis.parents[parent].func is parent:
            value = analysis.parents[parent]
        elif isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) \
                and parent.func.id in _HOST_CONVERSIONS and parent.args == [value]:
            value = parent
        else:
            break
        parent = analysis.parents.get(value)
    roles = analysis.roles_for(call)
    if isinstance(parent, ast.Call) and _environment_step(roles, analysis, parent) and value in _arguments(parent):
        return True
    if not (isinstance(parent, ast.Assign) and parent.value is value and len(parent.targets) == 1
            and isinstance(parent.targets[0], ast.Name)):
        return False
    name = parent.targets[0].id
    return any(isinstance(node, ast.Call) and node.lineno >= parent.end_lineno
               and _environment_step(roles, analysis, node)
               and any(isinstance(arg, ast.Name) and arg.id == name for arg in _arguments(node))
               for node in walk_nodes(loop))


def _arguments(call: ast.Call) -> list[ast.AST]:
    return [*call.args, *(k.value for k in call.keywords)]


def _environment_step(roles, analysis: Analysis, call: ast.Call) -> bool:
    """`obs, reward, done, info = env.step(action)`: a `.step(...)` that is no optimizer's,
    scheduler's or scaler's, whose result is unpacked into a transition (an optimizer's step
    returns nothing worth unpacking; `scheduler.step(val_loss.item())` binds nothing)."""
    if call_name(call) != "step" or receiver(call) is None or roles.is_optimizer_step(call) \
            or roles.is_scheduler_step(call):
        return False
    holder = analysis.parents.get(call)
    return isinstance(holder, ast.Assign) and holder.value is call and len(holder.targets) == 1 \
        and isinstance(holder.targets[0], ast.Tuple) and len(holder.targets[0].elts) >= _TRANSITION_SIZE


def _only_where_the_loop_does_not_train(analysis: Analysis, call: ast.Call, loop) -> bool:
    """One loop serves every phase (`if phase == "train": loss.backward(); optimizer.step()`)
    and `call` runs only in a branch that excludes that test: the `else`/`elif` of an `if` with
    the same test, `if not <test>:`, or `if phase == "val":` beside `phase == "train"`.  Those
    iterations take no training step, so their sync stalls no step."""
    training_tests = _tests_of(analysis, loop)
    if not training_tests:
        return False
    for if_stmt, in_body in _guards_inside(analysis, call, loop.node):
        test = if_stmt.test
        if not in_body and node_key(test) in training_tests:
            return True
        if in_body and isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) \
                and node_key(test.operand) in training_tests:
            return True
        if in_body and any(_other_value_of_same_subject(test, other) for other in training_tests.values()):
            return True
    return False


def _guards_inside(analysis: Analysis, node: ast.AST, loop: ast.AST) -> list[tuple[ast.If, bool]]:
    """The `if`s around `node` that sit inside `loop`, with whether `node` is in their body."""
    return [(if_stmt, in_body) for if_stmt, in_body in analysis.context(node).guards
            if loop.lineno < if_stmt.lineno <= (loop.end_lineno or loop.lineno)]


def _tests_of(analysis: Analysis, loop) -> dict[str, ast.AST]:
    """The tests (by their dump) whose body holds every backward and optimizer step of the
    loop's own body; none when the loop has no such step (it steps through a helper)."""
    steps = [*analysis.backward_calls(loop, direct=True), *analysis.optimizer_steps(loop, direct=True)]
    common = None
    for step in steps:
        tests = {node_key(s.test): s.test for s, in_body in _guards_inside(analysis, step, loop.node) if in_body}
        common = tests if common is None else {k: v for k, v in common.items() if k in tests}
    # `if (i + 1) % accum == 0: optimizer.step()` is a period, not a phase: the other
    # iterations still train (they accumulate gradients)
    return {k: v for k, v in (common or {}).items() if not tests_modulo(v)}


def _other_value_of_same_subject(test: ast.AST, training: ast.AST) -> bool:
    """`phase == "val"` beside the training test `phase == "train"` (also enum members,
    `phase == LoopPhase.VAL`): the same subject cannot equal both values."""
    def parts(node: ast.AST):
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq) \
                and _fixed_value(node.comparators[0]):
            return node_key(node.left), node_key(node.comparators[0])
        return None

    mine, theirs = parts(test), parts(training)
    return mine is not None and theirs is not None and mine[0] == theirs[0] and mine[1] != theirs[1]


def _fixed_value(node: ast.AST) -> bool:
    """A literal or a named constant (`LoopPhase.TRAIN`, `TRAIN`): a value, not a variable."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Name):
        return node.id.isupper()
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def in_branch_that_leaves(analysis: Analysis, node: ast.AST, loop: ast.AST) -> bool:
    """Inside the loop, an enclosing branch ends by leaving it (`raise`, `return`, `break`,
    `sys.exit(...)`): `if not math.isfinite(loss.item()): print(loss.item()); sys.exit(1)`
    runs that branch at most once, not every step."""
    for if_stmt, in_body in analysis.context(node).guards:
        inside = loop.lineno < if_stmt.lineno <= (loop.end_lineno or loop.lineno)
        branch = if_stmt.body if in_body else if_stmt.orelse
        if inside and branch and _leaves(branch[-1], if_stmt, in_body):
            return True
    return False


def _leaves(stmt: ast.stmt, if_stmt: ast.If | None = None, in_body: bool = True) -> bool:
    """`raise`, `return`, `break`, `sys.exit(...)`, or, as the last statement of a branch of
    `if_stmt`, an `assert` that cannot hold there (`if not math.isfinite(v): ...; assert
    math.isfinite(v)`, `assert False`): it raises whenever the branch runs."""
    if isinstance(stmt, (ast.Raise, ast.Return, ast.Break)):
        return True
    if isinstance(stmt, ast.Assert):
        return _always_fails(stmt.test, if_stmt, in_body)
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
        and call_name(stmt.value) in ("exit", "_exit", "quit")


def _always_fails(asserted: ast.AST, if_stmt: ast.If | None, in_body: bool) -> bool:
    """The asserted condition is false wherever the branch runs: a false constant, or the
    negation of what the `if` found (its test in the `else`, `X` under `if not X:`)."""
    if isinstance(asserted, ast.Constant) and not asserted.value:
        return True
    if if_stmt is None:
        return False
    test = if_stmt.test
    negated = test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else None
    ruled_out = test if not in_body else negated
    if in_body and negated is None and isinstance(asserted, ast.UnaryOp) and isinstance(asserted.op, ast.Not):
        asserted, ruled_out = asserted.operand, test  # `if X: ...; assert not X`
    return ruled_out is not None and node_key(asserted) == node_key(ruled_out)


def tests_modulo(test: ast.AST, value_of=None, predicate=None) -> bool:
    """`value_of` gives a local name's value (the flag's own test), followed once;
    `predicate` says whether a call is a helper that tests `%` (`divisible_by(i, n)`)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(tests_modulo(v, value_of, predicate) for v in test.values)
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        # `if step == 0 or step % n == 0:`: a periodic test or-ed with one-off tests stays periodic
        return any(tests_modulo(v, value_of, predicate) for v in test.values) and all(
            tests_modulo(v, value_of, predicate) or _one_off(v) for v in test.values)
    if isinstance(test, ast.Call):  # `divisible_by(step, n)`; never its negation, true on most steps
        return predicate is not None and predicate(test)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    if isinstance(test, ast.Name) and value_of is not None:
        value = value_of(test)
        return value is not test and tests_modulo(value, predicate=predicate)
    if isinstance(test, ast.Compare):
        test = test.left
    return isinstance(test, ast.BinOp) and isinstance(test.op, ast.Mod)


def _one_off(test: ast.AST) -> bool:
    """`step == 0`, `batch_idx == len(loader) - 1`, `first_batch`, `is_last`: holds on one step."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
        return True
    name = test.id if isinstance(test, ast.Name) else test.attr if isinstance(test, ast.Attribute) else ""
    return name.lower().startswith(("first", "last", "is_first", "is_last"))


@register
class SyncInTrainingLoop(Rule):
    """
    ## What it does
    Flags `.item()`, `.cpu()`, `.numpy()` and `.tolist()` on a tensor in every iteration of
    a training loop (not under a periodic `if step % N == 0:` or a helper of the file that
    only returns such a test, `if divisible_by(step, N):`, alone or or-ed with one-off
    tests such as `step == 0`, or under a flag bound to such a test (`regularize = step % N
    == 0` ... `if regularize:`), or under a throttle that logs once per interval (`if now -
    last_logging > args.log_freq_time:` whose branch sets `last_logging = now`), or under a test
    of the loop's counter against a fixed set of steps (`if i in np.linspace(0, iters, 10,
    dtype=int):`, `if step in log_steps:`), or under a flag the loop clears each iteration and
    sets only under such a test or a one-off one (`plot = False`, `if i == 0: plot = True`,
    then `if plot:`), nor in a branch
    that leaves the loop, nor the value a NaN check
    that stops training reads (`if not math.isfinite(loss_value): sys.exit(1)`, or an `assert
    math.isfinite(loss_value)` there), nor the value a `while` loop's own test reads (`score =
    -loss.item()` in `while score < 0.99:`) or an `if` ending in `break`/`return` tests (`loss_value
    = loss.item()`, then `if loss_value < eps: break`: an early stop), nor after an explicit `torch.cuda.synchronize()`
    earlier in the same iteration (alone, or under a test that the code runs on CUDA,
    `if device_type == "cuda":`), where the host already
    waits, nor on a tensor a factory made on the host, `torch.randint(0, 5, (1,)).item()`,
    nor on the host copy a sync already made (`loss = criterion(out, y).cpu()`, then
    `loss.item()`; `loss.cpu().data.item()`: one finding, at the `.cpu()`), nor in the
    branch of a loop shared by phases that excludes its training step (`if phase == "train":
    loss.backward(); optimizer.step()`, then `elif phase == "val": loss.item()`), nor the action handed to an environment's step, `obs, reward, done, info =
    env.step(action.item())`: the environment runs on the host and needs it to go on),
    in code that runs on a GPU (moved there by the code, or by
    `fabric.setup`/`accelerator.prepare`), but not in a loop that only runs, in the file's
    order, before its first move to a GPU (a notebook's first, CPU-only `training_loop`, whose
    GPU version follows cells later); not in test files (nor in a module that defines a `unittest.TestCase`, an integration test whatever its file name). A loop whose backward or
    optimizer step sits in a helper function it calls counts as a training loop, but not one
    whose helper runs an adversarial attack (`attack_pgd(model, x, y)` backpropagates to the
    input and trains nothing: the loop evaluates).

    ## Why is this bad
    Each of these copies a value to the host, which waits for every queued GPU kernel to
    finish: the CPU can no longer run ahead, and the GPU idles between steps.

    ## Example
    ```python
    for x, y in loader:
        ...
        running += loss.item()
    ```

    ## Use instead
    ```python
    for step, (x, y) in enumerate(loader):
        ...
        running += loss.detach()
        if step % 100 == 0:
            print(f"loss {loss.item():.4f}")
    ```
    """

    code = "TL401"
    name = "sync-in-training-loop"
    severity = "information"
    fix_safety = "none"

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        if analysis.is_test_file or analysis.defines_test_case \
                or not (analysis.moves_to_accelerator() or analysis.framework_places_on_accelerator):
            return  # a test asserting a value each step syncs on purpose
        for call in analysis.iter_calls(*_SYNC_METHODS):
            target = receiver(call)
            if target is None or call.args or call.keywords:
                continue
            if _host_copy(_unwrapped(target)) and (self._first_sync_reported(analysis, _unwrapped(target))
                                                    or not self._is_device_tensor(analysis, target, call)):
                continue  # `x.cpu().tolist()`, `x.cpu().data.item()`: reported on the first sync of the chain
            if _made_on_host(analysis, target) or _bound_to_host_copy(analysis, _unwrapped(target)):
                continue
            if _left_on_host_by_the_step(analysis, target, call):
                continue  # `r_id.item()` of ids the loop never moves while it moves the images
            loop = self._step_loop(analysis, call)
            if loop is None or _guarded_by_modulo(analysis, call) or in_branch_that_leaves(analysis, call, loop.node):
                continue
            if _runs_before_any_move(analysis, call, loop):
                continue  # a notebook's first, CPU-only training loop; the GPU version comes later
            if _after_explicit_synchronize(analysis, call, loop):
                continue  # the step already waits for the GPU there; this sync adds no stall
            if _decides_an_exit(analysis, call):
                continue  # a NaN check that stops training, an early stop: the host needs the value each step
            if _decides_while_loop(analysis, call, loop.node):
                continue  # `while score < 0.99:` needs the value on the host to decide each step
            if _sent_to_environment(analysis, call, loop.node):
                continue  # the action an environment on the host must receive before it can step
            if _only_where_the_loop_does_not_train(analysis, call, loop):
                continue  # the validation phase of a loop shared by phases: no training step there
            if call_name(call) != "item" and not self._is_device_tensor(analysis, target, call):
                continue
            text = ast.unparse(call)
            message = (
                f"`{text}` runs every training step and makes the host wait for the GPU, stalling the pipeline. "
                f"Keep values on the device (e.g. `running += loss.detach()`) and sync only when logging "
                f"(under `if step % N == 0:`)."
            )
            yield self.finding_at(method_span(call), message)

    def _first_sync_reported(self, analysis: Analysis, sync: ast.Call) -> bool:
        """The chain's first sync (`x.cpu()` of `x.cpu().data.numpy()`) is reported itself: an
        `.item()`, or a tensor known to live on the device.  When it is not, a later sync of
        the chain is reported only with evidence of its own, even an `.item()` (`.data` shows
        a tensor moved off the device: `x.cpu().data.numpy()`)."""
        while _host_copy(_unwrapped(receiver(sync))):
            sync = _unwrapped(receiver(sync))
        return call_name(sync) == "item" or self._is_device_tensor(analysis, receiver(sync), sync)

    def _step_loop(self, analysis: Analysis, call: ast.Call):
        """The innermost loop around `call` that runs once per training step, directly or
        through a helper of the file it calls (`_backward(loss)`)."""
        for loop in reversed(analysis.context(call).loops):
            if analysis.is_step_loop(loop) or analysis.steps_through_helper(loop):
                return loop
        return None

    def _is_device_tensor(self, analysis: Analysis, target: ast.AST, at: ast.AST) -> bool:
        if isinstance(target, ast.Attribute) and target.attr == "data":
            # `x.data.cpu()`: a tensor the author moves off the device; but a batch just taken
            # from the step loop's loader is still on the host (`points = points.data.numpy()`
            # for CPU augmentation before `.cuda()`, PointNet++'s training scripts)
            return not _fresh_from_step_loop(analysis, target.value, at)
        roles = analysis.roles_for(at)
        base = target
        while isinstance(base, ast.Call) and isinstance(base.func, ast.Attribute):
            base = base.func.value
        while isinstance(base, ast.Subscript):
            base = base.value
        if isinstance(base, ast.BinOp) and not isinstance(base.op, ast.Mod):
            # `(pred.detach() - y).abs().mean()`: arithmetic with a tensor on the device stays there
            return self._is_device_tensor(analysis, base.left, at) or self._is_device_tensor(analysis, base.right, at)
        if isinstance(base, ast.Compare) and len(base.ops) == 1:
            # `(torch.sigmoid(logits) > 0.5).cpu()`: the mask of a tensor on the device is there too
            return self._is_device_tensor(analysis, base.left, at) \
                or self._is_device_tensor(analysis, base.comparators[0], at)
        if isinstance(base, ast.Attribute) and (roles.carries_graph(base.value, at)
                                                or _trainer_model_output(analysis, base.value, at)):
            return True  # `outputs.logits` of an HF-style model output lives where the model runs
        # the loss the step backpropagates (`scaler.scale(loss).backward()`) lives on the device too
        return roles.carries_graph(base, at) or roles.carries_graph(target, at) or roles.is_loss_value(base, at) \
            or _moved_to_accelerator(analysis, base) or _made_on_device(analysis, base)


def _fresh_from_step_loop(analysis: Analysis, name: ast.AST, at: ast.AST) -> bool:
    """`name` still holds what the header of the step loop around `at` bound it to (`for
    points, target in loader:`), not rebound (moved) since: a batch as the loader made it."""
    if not isinstance(name, ast.Name):
        return False
    assignment = analysis.roles_for(at).last_assignment(name.id, at)
    if assignment is None or not isinstance(assignment.statement, (ast.For, ast.AsyncFor)):
        return False
    return any(loop.node is assignment.statement and analysis.is_step_loop(loop)
               for loop in analysis.context(at).loops)


def _left_on_host_by_the_step(analysis: Analysis, name: ast.AST, at: ast.AST, depth: int = 0) -> bool:
    """`name` is an entry of the step loop's batch that the loop leaves where the loader made it
    while it moves another entry of the same batch to the accelerator (`for image, text,
    ref_ids in loader:` then `image = image.to(device)`): that loader yields host tensors, so
    the entry left alone is on the host.  Also an element of iterating such an entry
    (`for r_id, cam in zip(ref_ids, gradcam):`).  Not with a framework that places batches."""
    if not isinstance(name, ast.Name) or depth > 2 or analysis.framework_places_on_accelerator:
        return False
    assignment = analysis.roles_for(at).last_assignment(name.id, at)
    header = assignment.statement if assignment is not None else None
    if not isinstance(header, ast.For):
        return False
    step = next((loop for loop in analysis.context(at).loops if loop.node is header), None)
    if step is not None and analysis.is_step_loop(step):
        entries = [n.id for n in walk_nodes(header.target) if isinstance(n, ast.Name)]
        moved = {receiver(c).id for c in step.calls if isinstance(receiver(c), ast.Name)
                 and receiver(c).id in entries and analysis.moves_batch_to_accelerator(c)}
        return bool(moved) and name.id not in moved
    source = iterated_source(header.target, header.iter, name.id)
    return isinstance(source, ast.Name) and _left_on_host_by_the_step(analysis, source, header, depth + 1)


def _trainer_model_output(analysis: Analysis, name: ast.AST, at: ast.AST) -> bool:
    """`outputs` bound to `self.model(**batch)` in a trainer class's step, with grad on."""
    value, bound = followed(analysis, name)
    return bound is not None and isinstance(value, ast.Call) and not analysis.context(at).grad_disabled \
        and trainer_model_attribute(analysis, analysis.context(at).function, value) is not None


def _moved_to_accelerator(analysis: Analysis, base: ast.AST) -> bool:
    """A name bound to a batch moved to the GPU in place (`y = y.to(device)`, `batch = {k:
    v.to(device) for k, v in batch.items()}`): reading it back to the host waits for the GPU."""
    value, name = followed(analysis, base)
    if name is None:
        return False
    if isinstance(value, ast.DictComp):
        value = value.value
    # the moved value is data in a name or a batch entry: `get_model().cuda()` is a module
    return isinstance(value, ast.Call) and isinstance(receiver(value), (ast.Name, ast.Subscript)) \
        and analysis.moves_batch_to_accelerator(value)

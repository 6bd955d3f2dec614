"""TL204 unchecked-strict-false: flags `module.load_state_dict(state, strict=False)` used as a
statement, its result (the missing and unexpected keys) thrown away.
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator

from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import Finding, Rule
from torch_lsp.diagnostics.correctness.quoting import source_of
from torch_lsp.notebooks import shown_as_cell_output
from torch_lsp.roles import MODEL_NAME, OPTIMIZER_NAME, SCALER_NAME, SCHEDULER_NAME
from torch_lsp.shapes.stated import trailing_comment
from torch_lsp.syntax_nodes import argument, has_star_args, node_key, receiver, walk_nodes

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis


@register
class UncheckedStrictFalse(Rule):
    """## What it does
    Flags `module.load_state_dict(state, strict=False)` used as a statement, its
    result (the missing and unexpected keys) thrown away. Silent where the mismatch is
    accounted for: the state dict was filtered against the model's keys (also through a
    name, `msd = model.state_dict()`) or reconciled key by key by a loop over them (or built
    by one over `model.named_parameters()`: the model's own keys, its buffers left out), or its
    size is logged after the load, or it is the module's own `state_dict()` loaded back (`sd =
    model.state_dict()` ... `model.load_state_dict(sd, strict=False)`), or a temporary overlay the
    function undoes (`old = copy_state(model.state_dict())`, the non-strict load, then
    `model.load_state_dict(old)`: an EMA swap, whose missing keys keep the live values), the next
    statement asserts the outcome, `assign=True` loads onto
    meta tensors, or the statement just before warns about the checkpoint, or the load is the
    fallback, in an `except ... as e:` that has already logged `e`, of a strict load of the same
    state into the same module (the strict load's error lists every missing and unexpected key). Nor a call passing
    arguments `nn.Module.load_state_dict` does not take (`precision=`, `device=`): a project's
    own loader, whose result is not the key lists. Nor on an optimizer, an LR scheduler or a
    grad scaler (`optimizer.load_state_dict(ckpt["opt"], False)`), whose `load_state_dict`
    returns None. Nor in a notebook,
    where the load is the last expression of its cell: IPython displays the returned keys.

    ## Why is this bad
    `strict=False` tells PyTorch not to raise when the checkpoint and the model
    disagree; the returned `missing_keys` and `unexpected_keys` are then the only
    record of what did not load. Discarding them means a renamed layer or a wrong
    prefix (`module.`) silently leaves weights at their random initialisation.

    ## Example
    ```python
    model.load_state_dict(state, strict=False)
    ```

    ## Use instead
    ```python
    missing, unexpected = model.load_state_dict(state, strict=False)
    if unexpected:
        raise RuntimeError(f"unexpected keys in checkpoint: {unexpected}")
    log.info("not in checkpoint (left initialised): %s", missing)
    ```
    """

    code = "TL204"
    name = "unchecked-strict-false"
    severity = "warning"
    fix_safety = "safe"

    def check(self, analysis: "Analysis") -> Iterator[Finding]:
        for call in analysis.iter_calls("load_state_dict"):
            if receiver(call) is None or has_star_args(call) or not _torch_signature(call):
                continue
            if _not_a_module(analysis, call):
                continue  # an optimizer's, scheduler's or scaler's load_state_dict returns None
            strict = argument(call, 1, "strict")
            if not (isinstance(strict, ast.Constant) and strict.value is False):
                continue
            if not isinstance(analysis.parents.get(call), ast.Expr) or checks_keys_itself(analysis, call):
                continue
            if accounts_for_mismatch(analysis, call):
                continue
            if shown_as_cell_output(analysis, analysis.parents[call]):
                continue  # a notebook cell's last expression: IPython displays the keys
            yield self.finding(
                call,
                f"`{source_of(analysis, call)}` throws away its result: with `strict=False` the returned "
                "`missing_keys` and `unexpected_keys` are the only sign that the checkpoint did not fit, so "
                "mismatched layers silently keep their random weights. Bind the result and check or log both lists.",
                "Bind the result and warn about missing and unexpected keys",
            )


# `nn.Module.load_state_dict(state_dict, strict=True, assign=False)`: a call passing anything
# else (`precision=`, `device=`) is a project's own loader, whose result is not the key lists.
_TORCH_PARAMETERS = ("state_dict", "strict", "assign")


def _torch_signature(call: ast.Call) -> bool:
    return len(call.args) <= len(_TORCH_PARAMETERS) and all(kw.arg in _TORCH_PARAMETERS for kw in call.keywords)


def _not_a_module(analysis: "Analysis", call: ast.Call) -> bool:
    """`optimizer.load_state_dict(ckpt["opt"], False)`: the receiver is an optimizer (or an LR
    scheduler, a grad scaler), whose `load_state_dict` takes the state alone and returns None, so
    there are no key lists to check (the extra argument is a TypeError, not a silent mismatch)."""
    target = receiver(call)
    if isinstance(target, ast.Attribute):
        name = target.attr
    elif isinstance(target, ast.Name):
        roles = analysis.roles_for(call)
        if roles.is_optimizer(target.id) or roles.is_scheduler(target.id) or roles.is_scaler(target.id):
            return True
        if roles.is_model(target.id):
            return False
        name = target.id
    else:
        return False
    if MODEL_NAME.match(name):
        return False  # `opt_model`: a model that an optimizer's name prefix does not make one
    return bool(OPTIMIZER_NAME.match(name) or SCHEDULER_NAME.match(name) or SCALER_NAME.search(name))


def checks_keys_itself(analysis: "Analysis", call: ast.Call) -> bool:
    """The author already accounts for mismatched keys: the function computes its own
    `missing_keys`/`unexpected_keys` (before loading checkpoint shards one by one, say), or
    a comment on or just above the call explains the non-strict load."""
    assigned = analysis.roles_for(call).assignments
    if any("missing" in name.lower() or "unexpected" in name.lower() for name in assigned):
        return True
    statement = analysis.statement_of(call)
    comment = None
    if statement is not None:
        comment = trailing_comment(analysis.lines.line_text(statement.end_lineno), statement.end_col_offset)
    if comment and "strict" in comment.lower():
        return True
    for line in range(call.lineno - 1, max(call.lineno - 4, 0), -1):
        text = analysis.lines.line_text(line).strip()
        if not text.startswith("#"):
            break
        if "strict" in text.lower():
            return True
    return False


def accounts_for_mismatch(analysis: "Analysis", call: ast.Call) -> bool:
    """The surrounding code makes the non-strict load deliberate and visible: the state dict was
    filtered against the model's own keys (`intersect_dicts(csd, model.state_dict())`, a
    comprehension testing `k in model_dict`) or its size is reported after the load; the next
    statement asserts the outcome; `assign=True` loads onto meta tensors; or the block has just
    warned the user about the checkpoint."""
    assign = argument(call, 2, "assign")
    if isinstance(assign, ast.Constant) and assign.value is True:
        return True
    statement = analysis.statement_of(call)
    block = analysis.block_of(statement) if statement is not None else None
    if not block:
        return False
    position = block.index(statement)
    before, after = block[:position], block[position + 1:]
    if after and isinstance(after[0], ast.Assert):
        return True
    if before and _warns(before[-1]) or _overlay_restored(analysis, call):
        return True
    if _reported_strict_fallback(analysis, call, statement, before):
        return True
    state = argument(call, 0, "state_dict")
    if not isinstance(state, ast.Name):
        return False
    if _own_state_dict(analysis, call, state.id):
        return True
    model_dicts = _model_state_dicts(analysis, call)
    for earlier in reversed(before):
        if _reconciles(earlier, state.id, model_dicts):
            return True
        if isinstance(earlier, ast.Assign) and any(isinstance(t, ast.Name) and t.id == state.id for t in earlier.targets):
            if _filtered_against_model(earlier.value, model_dicts):
                return True
            break
    return any(_reports_size(stmt, state.id) for stmt in after[:2])


def _reported_strict_fallback(analysis: "Analysis", call: ast.Call, statement: ast.stmt,
                              before: list[ast.stmt]) -> bool:
    """`try: model.load_state_dict(sd, strict=True)` / `except RuntimeError as e: logger.error(e)`
    then `model.load_state_dict(sd, strict=False)`: the fallback of a strict load of the same state
    into the same module, whose error (it lists every missing and unexpected key) the handler has
    just reported, so the mismatch is on record.  A handler that swallows the error is no record."""
    handler = analysis.parents.get(statement)
    if not isinstance(handler, ast.ExceptHandler) or not handler.name:
        return False
    attempt = analysis.parents.get(handler)
    if not isinstance(attempt, ast.Try):
        return False
    module, state = node_key(receiver(call)), argument(call, 0, "state_dict")
    if state is None:
        return False

    def strict_load(node: ast.AST) -> bool:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "load_state_dict" and receiver(node) is not None):
            return False
        first, strict = argument(node, 0, "state_dict"), argument(node, 1, "strict")
        return (node_key(receiver(node)) == module and first is not None and node_key(first) == node_key(state)
                and (strict is None or isinstance(strict, ast.Constant) and strict.value is True))

    if not any(strict_load(node) for stmt in attempt.body for node in walk_nodes(stmt)):
        return False
    return any(isinstance(node, ast.Call) and any(
        isinstance(arg, ast.Name) and arg.id == handler.name
        for value in [*node.args, *(k.value for k in node.keywords)] for arg in walk_nodes(value))
        for stmt in before for node in walk_nodes(stmt))


def _own_state_dict(analysis: "Analysis", call: ast.Call, name: str) -> bool:
    """`sd = model.model.state_dict()`, filled in place, then `model.model.load_state_dict(sd,
    strict=False)` (torchtitan's weight sync, re-running load hooks): the module's own keys,
    so nothing can be missing or unexpected."""
    bound = analysis.roles_for(call).assignments.get(name, [])
    loaded_into = node_key(receiver(call))
    return bool(bound) and all(_is_state_dict_call(a.value) and node_key(a.value.func.value) == loaded_into
                               for a in bound)


def _overlay_restored(analysis: "Analysis", call: ast.Call) -> bool:
    """`old = copy_state(model.state_dict())`, then `model.load_state_dict(state, strict=False)`
    and later `model.load_state_dict(old)` (demucs' `swap_state`, an EMA or best-state swap for
    evaluation): a temporary overlay on the live module, which the function snapshots before and
    restores after.  Keys the overlay lacks keep the module's current values on purpose (an EMA
    that averages only float tensors), not random ones."""
    module = receiver(call)
    if module is None:
        return False  # `load_state_dict(model, sd)`: a function of some library, not the module's method
    target = node_key(module)
    roles = analysis.roles_for(call)
    snapshots = {name for name, bound in roles.assignments.items()
                 if any(a.statement.lineno < call.lineno and a.value is not None and _reads_state_dict_of(a.value, target)
                        for a in bound)}
    if not snapshots:
        return False
    function = analysis.context(call).function
    for later in analysis.iter_calls("load_state_dict"):
        if later.lineno <= call.lineno or analysis.context(later).function is not function:
            continue
        restored = argument(later, 0, "state_dict")
        if isinstance(restored, ast.Name) and restored.id in snapshots and receiver(later) is not None \
                and node_key(receiver(later)) == target:
            return True
    return False


def _reads_state_dict_of(value: ast.AST, target: str) -> bool:
    """`value` holds `<target>.state_dict()` (or a copy of it: `deepcopy(model.state_dict())`)."""
    return any(_is_state_dict_call(node) and node_key(node.func.value) == target for node in walk_nodes(value))


def _model_state_dicts(analysis: "Analysis", call: ast.Call) -> set[str]:
    """Names the function binds to a module's own `state_dict()` (`msd = model.state_dict()`)."""
    return {name for name, bound in analysis.roles_for(call).assignments.items()
            if any(_is_state_dict_call(a.value) for a in bound)}


def _is_state_dict_call(value: ast.AST | None) -> bool:
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "state_dict"


def _filtered_against_model(value: ast.AST, model_dicts: set[str]) -> bool:
    if isinstance(value, ast.Call):
        return any(_is_state_dict_call(a) for a in [*value.args, *(k.value for k in value.keywords)])
    if isinstance(value, ast.DictComp):
        tests = [test for generator in value.generators for test in generator.ifs]
        conditions = [ast.unparse(test) for test in tests]
        # `if msd[k].shape == v.shape` with `msd = model.state_dict()`: kept only where the model agrees.
        return any("state_dict" in text or "model" in text.lower() for text in conditions) or any(
            isinstance(node, ast.Name) and node.id in model_dicts for test in tests for node in ast.walk(test))
    return False


def _reconciles(stmt: ast.stmt, state: str, model_dicts: set[str]) -> bool:
    """`for k in model_state_dict: ... state_dict[k] = model_state_dict[k]`: a loop over the
    model's own state dict that writes into the loaded one, so the author reconciles the
    two key by key (filling or replacing what does not fit) before the non-strict load; or
    one over its `named_parameters()` that builds the dict (an interpolation of weights: its
    keys are the model's, and only the buffers are left out, on purpose)."""
    if not isinstance(stmt, (ast.For, ast.AsyncFor)):
        return False
    source = stmt.iter
    if isinstance(source, ast.Call) and isinstance(source.func, ast.Attribute) and source.func.attr in ("keys", "items"):
        source = source.func.value
    own_tensors = isinstance(source, ast.Call) and isinstance(source.func, ast.Attribute) and \
        source.func.attr in ("named_parameters", "named_buffers")  # a dict of the model's own keys
    if not (_is_state_dict_call(source) or own_tensors or isinstance(source, ast.Name) and source.id in model_dicts):
        return False
    return any(isinstance(node, ast.Assign) and any(
        isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == state for t in node.targets)
        for node in walk_nodes(stmt))


def _reports_size(stmt: ast.stmt, name: str) -> bool:
    """`LOGGER.info(f"Transferred {len(csd)}/...")`: the number of loaded tensors is logged."""
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len"
               and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id == name
               for node in walk_nodes(stmt))


def _warns(stmt: ast.stmt) -> bool:
    return (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
            and "warn" in ast.unparse(stmt.value.func).lower())

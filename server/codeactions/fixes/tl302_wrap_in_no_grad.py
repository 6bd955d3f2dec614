"""TL302: run evaluation without building the autograd graph.

Three shapes, most specific first:
- `@torch.no_grad()` on the function, when the whole function is evaluation: its name
  says so (`validate`, `evaluate_*`, `predict`) or it puts the model in eval mode before
  every model call; and nothing in it trains (no `.backward()`, optimizer step,
  `autograd.grad`, `requires_grad`, `enable_grad`, `.train()`, nor a call of a local
  function that does, or of anything named like training);
- `with torch.no_grad():` around the evaluation loop: the outermost loop around the
  model call in which nothing trains and nothing suspends (`yield`/`await` would leak
  the disabled grad mode to other code);
- `with torch.no_grad():` around the evaluation statements (from the first to the last
  model call of their block) when the call is in no loop.

No fix at all when a caller may backpropagate through the result: a call site that runs
every training step, unguarded.  `import torch` is added when nothing binds `torch`
where the new code goes.
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from torch_lsp.analysis import IDENTIFIER_WORDS, is_backward_call, named_for_evaluation, runs_an_attack
from torch_lsp.codeactions.imports import module_alias, use_module
from torch_lsp.codeactions.locate import call_at, on_lines_of_its_own
from torch_lsp.codeactions.names import contains
from torch_lsp.codeactions.registry import FixOffer, fixer, importing, offer
from torch_lsp.codeactions.rewrite import Rewrite
from torch_lsp.syntax_nodes import call_name, keyword

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis, FunctionInfo, LoopInfo
    from torch_lsp.diagnostics.base import Finding



@fixer("TL302", data=("model",))
def add_no_grad(analysis: "Analysis", finding: "Finding") -> list[FixOffer]:
    call = call_at(analysis, finding)
    if call is None:
        return []
    function = analysis.context(call).function
    model = finding.data.get("model") or analysis.roles_for(call).model_name(call)
    if model is None or _result_may_be_trained(analysis, function):
        return []
    torch = module_alias(analysis, "torch", call) or "torch"
    suffix = importing(analysis, "torch", call)
    offers = []
    if _whole_function_evaluates(analysis, function, model):
        offers.append(offer(analysis, finding, f"Decorate `{function.name}()` with `@{torch}.no_grad()`" + suffix,
                            lambda rw: _decorate(rw, function)))
    loop = _evaluation_loop(analysis, call)
    if loop is not None and on_lines_of_its_own(analysis, loop.node):
        offers.append(offer(analysis, finding, f"Wrap evaluation loop in `{torch}.no_grad()`" + suffix,
                            lambda rw: _wrap(rw, [loop.node], call), preferred=not offers))
    elif not analysis.context(call).loops:
        block = _evaluation_block(analysis, call, model)
        if block and all(on_lines_of_its_own(analysis, s) for s in block):
            offers.append(offer(analysis, finding, f"Wrap the evaluation in `{torch}.no_grad()`" + suffix,
                                lambda rw: _wrap(rw, block, call), preferred=not offers))
    return offers


def _decorate(rw: Rewrite, function: "FunctionInfo") -> None:
    torch = use_module(rw, "torch", function.node)
    ref = rw.ref(function.node)
    decorator = rw.statements(ref.group, f"@{torch}.no_grad()\ndef _():\n    pass\n")[0].decorators[0]
    rw.change_statement(function.node, lambda node: node.with_changes(decorators=[*node.decorators, decorator]))


def _wrap(rw: Rewrite, statements: list[ast.stmt], at: ast.AST) -> None:
    torch = use_module(rw, "torch", at)
    rw.wrap(statements, f"with {torch}.no_grad()")


# ------------------------------------------------------------ evaluation only
def _evaluates_only(analysis: "Analysis", function: "FunctionInfo", calls: list[ast.Call],
                    statements: list[ast.stmt]) -> bool:
    """Nothing in these calls and statements trains, asks for gradients or suspends."""
    roles = analysis.roles_for(function)
    for call in calls:
        name = call_name(call) or ""
        if is_backward_call(analysis, call) or roles.is_optimizer_step(call) or name in ("requires_grad_", "train"):
            return False
        if analysis.call_qualname(call) in ("torch.autograd.grad", "torch.func.grad") or analysis.grad_mode_effect(call) is False:
            return False
        requires = keyword(call, "requires_grad")
        if requires is not None and not (isinstance(requires.value, ast.Constant) and requires.value.value is False):
            return False
        if _named_like_training(name) or runs_an_attack(call):
            return False
        if any(analysis.computes_gradients(local) for local in analysis.function_named(name)):
            return False
    for stmt in statements:
        for node in _same_scope_nodes(stmt):
            if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await)):
                return False
    return True


def _named_like_training(name: str) -> bool:
    """`train_one_epoch`, `fit`, `trainStep`, `optimizer_step`: calls that may train."""
    words = [w.lower() for w in IDENTIFIER_WORDS.split(name) if w]
    return any(w.startswith("train") or w in ("fit", "backward", "step") for w in words)


def _same_scope_nodes(stmt: ast.stmt):
    """The nodes of one statement's own code (nested statements are listed separately)."""
    stack = [stmt]
    while stack:
        node = stack.pop()
        yield node
        for name, value in ast.iter_fields(node):
            if isinstance(value, list):
                stack.extend(v for v in value if isinstance(v, ast.AST) and not isinstance(v, (ast.stmt, ast.Lambda)))
            elif isinstance(value, ast.AST) and not isinstance(value, (ast.stmt, ast.Lambda)):
                stack.append(value)


def _whole_function_evaluates(analysis: "Analysis", function: "FunctionInfo", model: str) -> bool:
    if function.is_module or not isinstance(function.node, ast.FunctionDef):
        return False
    if not _evaluates_only(analysis, function, function.calls, function.statements):
        return False
    if named_for_evaluation(function):
        return True
    switches = analysis.switched(function, model, "eval")
    if not switches:
        return False
    first_switch = min((s.call.lineno, s.call.col_offset) for s in switches)
    roles = analysis.roles_for(function)
    return all((c.lineno, c.col_offset) > first_switch for c in function.calls if roles.model_name(c) == model)


def _result_may_be_trained(analysis: "Analysis", function: "FunctionInfo") -> bool:
    """A call site runs every training step, unguarded: its result may be backpropagated."""
    if function.is_module:
        return False
    return any(
        analysis.enclosing_step_loop(site) is not None and not analysis.context(site).guards
        for site in analysis.callers(function)
    )


# ------------------------------------------------------------------ targets
def _evaluation_loop(analysis: "Analysis", call: ast.Call) -> "LoopInfo | None":
    """The outermost loop around `call` (same function) in which nothing trains."""
    function = analysis.context(call).function
    chosen = None
    for loop in reversed(analysis.context(call).loops):
        if not _evaluates_only(analysis, function, loop.calls, [loop.node, *loop.statements]):
            break
        chosen = loop
    return chosen


def _evaluation_block(analysis: "Analysis", call: ast.Call, model: str) -> list[ast.stmt] | None:
    """The statements of the call's block, from the first to the last that run `model`."""
    function = analysis.context(call).function
    stmt = analysis.statement_of(call)
    block = analysis.block_of(stmt)
    if block is None:
        return None
    roles = analysis.roles_for(function)
    running = [s for s in block if any(roles.model_name(c) == model and contains(s, c) for c in function.calls)]
    if not running:
        return None
    members = block[block.index(running[0]): block.index(running[-1]) + 1]
    calls = [c for c in function.calls if any(contains(s, c) for s in members)]
    inner = [s for s in function.statements if any(contains(m, s) for m in members)]
    return members if _evaluates_only(analysis, function, calls, inner) else None

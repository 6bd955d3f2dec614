"""TL407 manual-zero-grad: flags gradients cleared by writing zeros — `p.grad.zero_()`,
`p.grad.data.zero_()`, `p.grad.fill_(0)`, `optimizer.zero_grad(set_to_none=False)`.
"""
from __future__ import annotations

import ast
from typing import Iterator

from torch_lsp.analysis import Analysis
from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import Finding, Rule
from torch_lsp.syntax_nodes import argument, call_name, receiver


@register
class ManualZeroGrad(Rule):
    """
    ## What it does
    Flags gradients cleared by writing zeros — `p.grad.zero_()`, `p.grad.data.zero_()`,
    `p.grad.fill_(0)`, `optimizer.zero_grad(set_to_none=False)` (or `zero_grad(False)`).
    Silent in test files, in the branch of an `if set_to_none:` whose other branch sets
    `p.grad = None` (an implementation of the option), and in a class (or the functions of
    a file) that adds into gradients in place (`p.grad += g`, `p.grad.add_(g)`): those need
    the zeros, and a `None` gradient would raise `TypeError` (scaling under `if p.grad is not
    None:`, `p.grad.mul_(factor)`, works with freed gradients and does not count).

    ## Why is this bad
    Writing zeros launches a kernel per parameter and keeps the gradient memory allocated;
    setting gradients to `None` (the default of `zero_grad()` since PyTorch 2.0) frees it
    and lets the next backward write instead of accumulate.

    ## Example
    ```python
    for p in model.parameters():
        p.grad.zero_()
    ```

    ## Use instead
    ```python
    optimizer.zero_grad(set_to_none=True)
    ```
    """

    code = "TL407"
    name = "manual-zero-grad"
    severity = "information"
    fix_safety = "safe"

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        if analysis.is_test_file:
            return
        accumulates: dict[ast.ClassDef | None, bool] = {}  # per class: the scan reads the whole file

        def zeros_needed(call: ast.Call) -> bool:
            cls = analysis.context(call).function.class_node
            if cls not in accumulates:
                # Outside classes, the file's functions anywhere: a fact of the whole file.
                accumulates[cls] = self._accumulates_into_grad(analysis, cls) if cls is not None else \
                    analysis.file_fact("TL407 functions add into gradients", self._module_functions_accumulate)
            return accumulates[cls]

        for call in analysis.iter_calls("zero_", "fill_", "zero_grad"):
            name = call_name(call)
            if name == "zero_grad":
                set_to_none = argument(call, 0, "set_to_none")  # `zero_grad(False)` is the same call
                if isinstance(set_to_none, ast.Constant) and set_to_none.value is False \
                        and not zeros_needed(call):
                    yield self.finding(call, f"`{ast.unparse(call)}` writes zeros into every gradient instead of "
                                             f"freeing it. Use `set_to_none=True` (the default).",
                                       "Use `set_to_none=True`")
                continue
            target = receiver(call)
            if isinstance(target, ast.Attribute) and target.attr == "data":
                target = target.value
            if not (isinstance(target, ast.Attribute) and target.attr == "grad"):
                continue
            if name == "fill_" and not (call.args and isinstance(call.args[0], ast.Constant) and call.args[0].value == 0):
                continue
            if zeros_needed(call) or _other_branch_frees(analysis, call):
                continue
            message = (
                f"`{ast.unparse(call)}` writes zeros into the gradient instead of freeing it. "
                f"Call `optimizer.zero_grad(set_to_none=True)` (or set `{ast.unparse(target)} = None`)."
            )
            yield self.finding(call, message, f"Set `{ast.unparse(target)} = None` instead")

    def _module_functions_accumulate(self, analysis: Analysis) -> bool:
        return self._accumulates_into_grad(analysis, None)

    def _accumulates_into_grad(self, analysis: Analysis, cls: ast.ClassDef | None) -> bool:
        """`p.grad += g`, `p.grad.add_(g)` in the same class (or, outside classes, in the
        file's functions): the code adds into existing gradient tensors, which a `None`
        gradient would break (`TypeError`); the zeros are needed there."""
        def in_scope(node: ast.AST) -> bool:
            return analysis.context(node).function.class_node is cls

        for stmt in analysis.statements:
            if isinstance(stmt, ast.AugAssign) and _is_grad(stmt.target) and in_scope(stmt):
                return True
        return any(_is_grad(receiver(call)) and in_scope(call) and not _scales_only_existing(analysis, call)
                   for call in analysis.iter_calls(*_ADDS_INTO))


_ADDS_INTO = ("add_", "copy_", "addcmul_", "addcdiv_", "sub_", "mul_", "div_")
_SCALES = ("mul_", "div_")


def _scales_only_existing(analysis: Analysis, call: ast.Call) -> bool:
    """`if p.grad is not None: p.grad.mul_(factor)`: scaling skips a freed gradient, and a
    freed one scaled is still nothing, so this code does not need the zeros (an add would
    drop its contribution there, so adds still count)."""
    if call_name(call) not in _SCALES:
        return False
    for if_stmt, in_body in analysis.context(call).guards:
        test = if_stmt.test
        if in_body and isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.IsNot) \
                and _is_grad(test.left) and isinstance(test.comparators[0], ast.Constant) \
                and test.comparators[0].value is None:
            return True
    return False


def _is_grad(node: ast.AST | None) -> bool:
    if isinstance(node, ast.Attribute) and node.attr == "data":
        node = node.value
    return isinstance(node, ast.Attribute) and node.attr == "grad"


def _other_branch_frees(analysis: Analysis, call: ast.Call) -> bool:
    """`if set_to_none: p.grad = None` / `else: p.grad.zero_()`: an implementation of the
    option (a custom optimizer's `zero_grad`) writes zeros only where its caller asked for them."""
    for if_stmt, in_body in analysis.context(call).guards:
        other = if_stmt.orelse if in_body else if_stmt.body
        for node in (n for stmt in other for n in ast.walk(stmt)):
            if isinstance(node, ast.Assign) and any(_is_grad(t) for t in node.targets) \
                    and isinstance(node.value, ast.Constant) and node.value.value is None:
                return True
    return False

"""TL206: pass the logits to the loss, not the output of the activation (naming the logits
first when the activation's result is a variable)."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

import libcst as cst

from torch_lsp.syntax_nodes import argument
from torch_lsp.codeactions import calls
from torch_lsp.codeactions.locate import call_at
from torch_lsp.codeactions.names import bound_in, fresh_name
from torch_lsp.syntax_nodes import root_name
from torch_lsp.codeactions.registry import FixOffer, fixer, offer
from torch_lsp.codeactions.rewrite import CannotRewrite, Rewrite
from torch_lsp.diagnostics.correctness.provenance import followed
from torch_lsp.diagnostics.correctness.quoting import source_of
from torch_lsp.diagnostics.correctness.tl206_activation_before_loss import VALUE_KEEPING_METHODS, activation_output

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.diagnostics.base import Finding


@fixer("TL206")
def pass_logits(analysis: "Analysis", finding: "Finding") -> list[FixOffer]:
    call = call_at(analysis, finding)
    prediction = argument(call, 0, "input") if call is not None else None
    found = activation_output(analysis, prediction) if prediction is not None else None
    if found is None:
        return []
    activation = found[1]
    logits = _activation_input(analysis, activation)
    site = _activation_site(analysis, prediction, activation)
    if logits is None or site is None:
        return []
    title = f"Pass the logits `{source_of(analysis, logits, 30)}`"
    if site is activation:
        method_form = analysis.call_qualname(activation) is None and isinstance(activation.func, ast.Attribute)
        return [offer(analysis, finding, title, lambda rw: rw.change_call(activation, _unwrapped(method_form)))]
    # `probs = softmax(logits)` ... `loss(probs, y)`: name the logits instead of `probs`.
    if _stable_between(analysis, logits, activation, call):
        text = ast.unparse(logits)
        return [offer(analysis, finding, title, lambda rw: _pass_name(rw, call, site, text))]
    return _name_the_logits(analysis, finding, call, site, activation, logits)


def _pass_name(rw: Rewrite, call: ast.Call, site: ast.Name, text: str) -> None:
    rank = _name_rank(call, site)
    rw.change_call(call, lambda node: _replace_nth_name(node, site.id, rank, text))


def _name_the_logits(analysis: "Analysis", finding: "Finding", call: ast.Call, site: ast.Name,
                     activation: ast.Call, logits: ast.AST) -> list[FixOffer]:
    """`probs = softmax(model(x))` ... `loss(probs, y)` -> `logits = model(x)`,
    `probs = softmax(logits)`, `loss(logits, y)`: the model still runs once, first."""
    stmt = analysis.statement_of(activation)
    if not (isinstance(stmt, ast.Assign) and stmt.value is activation and len(stmt.targets) == 1):
        return []
    name = fresh_name(analysis, analysis.context(stmt).function, "logits")
    method_form = analysis.call_qualname(activation) is None and isinstance(activation.func, ast.Attribute)

    def plan(rw: Rewrite) -> None:
        code = rw.source.segment(logits)
        if "\n" in code or "\r" in code:
            code = f"({code})"
        rw.insert_before(stmt, f"{name} = {code}\n")
        rw.change_call(activation, lambda node: _with_input(node, method_form, name))
        _pass_name(rw, call, site, name)

    title = f"Name the logits `{name} = {source_of(analysis, logits, 30)}` and pass them"
    return [offer(analysis, finding, title, plan)]


def _with_input(node: cst.Call, method_form: bool, name: str) -> cst.Call:
    """The activation applied to `name` instead of the expression it had."""
    if method_form:
        return node.with_changes(func=node.func.with_changes(value=cst.Name(name)))
    index = calls.find_argument(node, 0, "input")
    if index is None:
        raise CannotRewrite("the activation has no input argument")
    args = list(node.args)
    args[index] = args[index].with_changes(value=cst.Name(name))
    return node.with_changes(args=args)


def _activation_input(analysis: "Analysis", activation: ast.Call) -> ast.AST | None:
    if analysis.call_qualname(activation) is None and isinstance(activation.func, ast.Attribute):
        return activation.func.value
    return argument(activation, 0, "input")


def _activation_site(analysis: "Analysis", expr: ast.AST, activation: ast.Call) -> ast.AST | None:
    """The node inside the loss argument to replace: the activation call itself, or the name
    bound to its result."""
    node = expr
    for _ in range(12):
        if node is activation:
            return node
        if isinstance(node, ast.Name):
            value, via = followed(analysis, node)
            return node if via is not None and value is activation else None
        if isinstance(node, ast.Subscript):
            node = node.value
        elif (
            isinstance(node, ast.Call) and analysis.call_qualname(node) is None
            and isinstance(node.func, ast.Attribute) and node.func.attr in VALUE_KEEPING_METHODS
        ):
            node = node.func.value
        else:
            return None
    return None


def _unwrapped(method_form: bool):
    """`softmax(logits, dim=-1)` / `logits.softmax(-1)` -> `logits`."""

    def change(node: cst.Call) -> cst.BaseExpression:
        if method_form:
            inner = node.func.value
        else:
            index = calls.find_argument(node, 0, "input")
            if index is None:
                raise CannotRewrite("the activation has no input argument")
            inner = node.args[index].value
        inner = calls.parenthesized(calls.stripped(inner))
        return inner.with_changes(lpar=[*node.lpar, *inner.lpar], rpar=[*inner.rpar, *node.rpar])

    return change


def _stable_between(analysis: "Analysis", logits: ast.AST, activation: ast.Call, use: ast.Call) -> bool:
    """`logits` is a plain name (or attribute of one) not rebound between the activation and the use."""
    if not isinstance(logits, (ast.Name, ast.Attribute)) or any(isinstance(n, ast.Call) for n in ast.walk(logits)):
        return False
    name = root_name(logits)
    function = analysis.context(use).function
    for stmt in function.statements:
        if activation.lineno <= stmt.lineno <= use.lineno and stmt is not analysis.statement_of(activation):
            if name in bound_in([stmt]) and not isinstance(stmt, (ast.For, ast.While, ast.If, ast.With, ast.Try)):
                return False
    return name is not None


def _name_rank(call: ast.Call, site: ast.Name) -> int:
    names = sorted(
        (n for n in ast.walk(call) if isinstance(n, ast.Name) and n.id == site.id),
        key=lambda n: (n.lineno, n.col_offset),
    )
    return [id(n) for n in names].index(id(site))


class _Names(cst.CSTVisitor):
    """Names that `ast` also sees as names (not attribute names nor keyword names), in order."""

    def __init__(self, wanted: str) -> None:
        self.wanted = wanted
        self.found: list[cst.Name] = []
        self.skip: set[int] = set()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.skip.add(id(node.attr))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self.skip.add(id(node.keyword))

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == self.wanted and id(node) not in self.skip:
            self.found.append(node)


def _replace_nth_name(node: cst.Call, name: str, rank: int, text: str) -> cst.Call:
    visitor = _Names(name)
    node.visit(visitor)
    if rank >= len(visitor.found):
        raise CannotRewrite("the name to replace was not found")
    target = visitor.found[rank]
    return node.deep_replace(target, cst.parse_expression(text))

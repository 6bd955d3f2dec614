"""An edited version checked as an edit of the previous one (parsed in part, facts of the
statements it did not touch reused) gives exactly what checking its text from scratch gives:
the same findings, inlay hints and shape hovers, through chains of edits, for the ways
people type (characters typed and deleted, lines added, cut and doubled, brackets left
open, tabs, CRLF) on real-looking files."""
from __future__ import annotations

import ast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.robustness.mutations import KINDS, SOURCES, apply, read
from torch_lsp.analysis import analyze
from torch_lsp.checker import check_source
from torch_lsp.incremental_parse import reparse_edit
from torch_lsp.shapes import infer_shapes

BOUNDED = settings(max_examples=30, deadline=None, derandomize=True, database=None,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# Typing inside a function keeps most versions parseable, which is when the previous tree
# is reused: the edits the incremental path serves are the common ones here.
TYPED = ("x", "_1", " ", "", "\n", "\n        y = x\n", "    ", "# note", "(", "model", ".", "\"")
typing = st.tuples(st.just("typed"), st.floats(0, 1, exclude_max=True), st.integers(0, 999))
mutation = st.tuples(st.sampled_from(KINDS), st.floats(0, 1, exclude_max=True), st.integers(0, 999))
edits = st.lists(st.one_of(typing, typing, mutation), min_size=1, max_size=5)


def edit(text: str, change: tuple[str, float, int]) -> str:
    kind, where, what = change
    if kind != "typed":
        return apply(text, change)
    at = int(where * (len(text) + 1))
    return text[:at] + TYPED[what % len(TYPED)] + text[at + (what // len(TYPED)) % 3:]


def observed(result) -> tuple:
    """What a user sees of a check: every finding, and the shape pass's hints and hovers."""
    findings = list(result.findings)  # code, range, message, severity, fix, related places
    report = infer_shapes(result.analysis)
    lines = len(result.analysis.lines.lines)
    hovers = [report.hover(line, col) for line in range(1, lines + 1) for col in (4, 8, 12, 20)]
    return findings, report.inlay_hints(), hovers


@BOUNDED
@given(st.sampled_from(SOURCES), edits)
def test_a_chain_of_edits_checked_incrementally_equals_checking_each_text_from_scratch(path, changes):
    text = read(path)
    previous = check_source(text, str(path)).analysis
    for change in changes:
        text = edit(text, change)
        incremental = check_source(text, str(path), previous=previous.parsed)
        assert observed(incremental) == observed(check_source(text, str(path)))
        previous = incremental.analysis


@BOUNDED
@given(st.sampled_from(SOURCES), st.lists(typing, min_size=1, max_size=3))
def test_a_partly_parsed_tree_is_the_tree_of_the_whole_text(path, changes):
    text = read(path)
    previous = analyze(text)
    for change in changes:
        text = edit(text, change)
        tree = reparse_edit(previous.parsed, text)
        if tree is not None:
            assert ast.dump(tree, include_attributes=True) == ast.dump(ast.parse(text), include_attributes=True)
        previous = analyze(text, previous=previous.parsed)


def test_a_character_typed_in_a_function_reparses_only_that_function():
    text = "import torch\n\n\ndef f(x):\n    return x + 1\n\n\ndef g(y):\n    return y * 2\n"
    previous = analyze(text)
    edited = text.replace("x + 1", "x + 12")
    tree = reparse_edit(previous.parsed, edited)
    assert tree is not None
    assert tree.body[0] is previous.tree.body[0] and tree.body[2] is previous.tree.body[2]  # shared, not parsed
    assert tree.body[1] is not previous.tree.body[1]
    assert ast.dump(tree, include_attributes=True) == ast.dump(ast.parse(edited), include_attributes=True)


def test_an_edit_that_adds_a_line_reuses_the_statements_before_it_and_moves_the_ones_after():
    text = "import torch\n\n\ndef f(x):\n    return x + 1\n\n\ndef g(y):\n    return y * 2\n"
    previous = analyze(text)
    edited = text.replace("    return x + 1\n", "    x = x * 3\n    return x + 1\n")
    tree = reparse_edit(previous.parsed, edited)
    assert tree is not None and tree.body[0] is previous.tree.body[0]
    assert tree.body[2].lineno == previous.tree.body[2].lineno + 1
    assert ast.dump(tree, include_attributes=True) == ast.dump(ast.parse(edited), include_attributes=True)


def test_edits_that_could_change_other_statements_parse_the_whole_text():
    text = "import torch\n\n\ndef f(x):\n    return x + 1\n\n\ndef g(y):\n    return y * 2\n"
    previous = analyze(text)
    for edited in (text.replace("x + 1", "(x + 1"),  # an open bracket swallows what follows
                   text.replace("x + 1\n", "x + \\\n"),  # a continuation line joins the next one
                   text.replace("import torch", "import torch\nfrom __future__ import annotations")):
        assert reparse_edit(previous.parsed, edited) is None
    headed = analyze("# header\n" + text)
    assert reparse_edit(headed.parsed, "# a header\n" + text) is None  # before the first statement
    broken = analyze(text.replace("x + 1", "x +"))  # a previous version with a syntax error
    assert reparse_edit(broken.parsed, text) is None


# Edits at the level of whole top-level statements, which change what the statements the
# edit did not touch are checked against: the imports (an alias added, renamed, removed),
# the file's functions and classes (added, removed, renamed to a module class), and the
# line numbers of everything after them.
STATEMENT_EDITS = (
    "import torch.nn.functional as F\n",
    "from torch import nn\n",
    "import numpy as torch\n",
    "from torch.autograd import backward\n",
    "def helper(model, loader):\n    for x in loader:\n        model(x).backward()\n",
    "class Net(nn.Module):\n    def forward(self, x):\n        return x\n",
    "class Model(object):\n    pass\n",
    "criterion = nn.CrossEntropyLoss()\n",
    "model = Net()\n\n\n",
    "@torch.no_grad()\ndef evaluate(model, loader):\n    return [model(x) for x in loader]\n",
)
statement_edit = st.tuples(st.sampled_from(("add", "remove", "replace")), st.floats(0, 1, exclude_max=True),
                           st.integers(0, 999))


def edit_statements(text: str, change: tuple[str, float, int]) -> str:
    """Add, remove or replace one top-level statement of `text` (when it does not parse, add
    one at the top)."""
    kind, where, what = change
    lines = text.splitlines(keepends=True)
    try:
        body = ast.parse(text).body
    except SyntaxError:
        body = []
    if not body:
        return STATEMENT_EDITS[what % len(STATEMENT_EDITS)] + text
    statement = body[min(int(where * len(body)), len(body) - 1)]
    first = min([statement.lineno] + [d.lineno for d in getattr(statement, "decorator_list", ())]) - 1
    last = statement.end_lineno
    new = STATEMENT_EDITS[what % len(STATEMENT_EDITS)]
    if kind == "add":
        return "".join(lines[:first]) + new + "".join(lines[first:])
    if kind == "remove":
        return "".join(lines[:first]) + "".join(lines[last:])
    return "".join(lines[:first]) + new + "".join(lines[last:])


def facts(analysis) -> tuple:
    """The eager facts of an analysis, by node position (the trees are not the same objects):
    parents in order, contexts, functions, loops, imports, roles, call names, the references
    to imported names, some of the index."""
    from torch_lsp.name_resolution import rebound_names, references
    from torch_lsp.syntax_index import syntax_index

    def at(node):
        return (type(node).__name__, getattr(node, "lineno", None), getattr(node, "col_offset", None),
                getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None))

    def context(ctx):
        return (at(ctx.function.node), ctx.grad_disabled, tuple(at(loop.node) for loop in ctx.loops),
                tuple((at(stmt), body) for stmt, body in ctx.guards), len(ctx.with_items))

    def roles(scope):
        sets = tuple(tuple(sorted(getattr(scope, kind))) for kind in (
            "models", "optimizers", "schedulers", "scalers", "loss_modules", "activation_modules", "devices",
            "loop_targets"))
        assignments = tuple((name, tuple((at(a.statement), a.order, a.unpacked) for a in bound))
                            for name, bound in scope.assignments.items())
        graph = tuple(at(a.statement) for bound in scope.assignments.values() for a in bound
                      if scope.carries_graph(ast.Name(id=a.name, ctx=ast.Load()), a.statement))
        return sets, assignments, graph

    index = syntax_index(analysis)
    return (
        tuple(analysis.imports.items()),
        tuple((at(node), at(parent)) for node, parent in analysis.parents.items()),
        tuple((at(node), context(ctx)) for node, ctx in analysis.contexts.items()),
        tuple((f.name, f.no_grad_decorated, tuple(at(c) for c in f.calls), tuple(at(s) for s in f.statements),
               roles(analysis.roles[f])) for f in analysis.functions),
        tuple((tuple(at(c) for c in loop.calls), tuple(at(c) for c in loop.direct_calls)) for loop in analysis.loops),
        tuple(analysis.call_qualname(call) for call in analysis.calls),
        tuple((qualname, tuple((at(use.node), use.call is not None) for use in uses))
              for qualname, uses in references(analysis).items()),
        tuple(sorted(rebound_names(analysis))),
        tuple(tuple(at(node) for node in index.of_type(kind))
              for kind in (ast.Assign, ast.Call, ast.Name, ast.ExceptHandler, ast.FunctionDef)),
    )


@BOUNDED
@given(st.sampled_from(SOURCES), st.lists(st.one_of(statement_edit, typing), min_size=1, max_size=4))
def test_facts_of_an_edit_equal_the_facts_of_its_text_from_scratch(path, changes):
    text = read(path)
    previous = analyze(text, str(path))
    facts(previous)  # the index and the roles' graph facts of the previous version, as the rules ask them
    for change in changes:
        text = edit_statements(text, change) if change[0] != "typed" else edit(text, change)
        incremental = analyze(text, str(path), previous=previous.parsed)
        assert facts(incremental) == facts(analyze(text, str(path)))
        previous = incremental


KEPT = '''import torch
from torch import nn


class Net(object):
    pass


def train(x, loader):
    device = torch.device("cuda")
    x = x.cuda()
    layer = nn.Linear(2, 2)
    net = Net()
    net.parameters()
    for batch in loader:
        layer(batch).sum().backward()
    return net
'''


@pytest.mark.parametrize("before,after", [
    ("from torch import nn", "from torch import fft"),  # the imports change, the line count does not
    ("from torch import nn", "import numpy as nn"),
    ("class Net(object):", "class Net(nn.Module):"),  # a class of the file becomes a module
    ("class Net(object):", "class Other(object):"),  # the class `net = Net()` builds is gone
    ("import torch\n", "import numpy as torch\n"),  # `torch.device(...)` is no PyTorch device any more
])
def test_a_function_the_edit_kept_is_analysed_against_the_new_imports_and_classes(before, after):
    checked = check_source(KEPT)  # every rule has asked its facts, as the server's check does
    previous = checked.analysis
    facts(previous)
    edited = KEPT.replace(before, after)
    assert edited != KEPT
    incremental = check_source(edited, previous=previous.parsed)
    assert incremental.analysis.tree.body[-1] is previous.tree.body[-1]  # `train` kept, not parsed again
    assert facts(incremental.analysis) == facts(analyze(edited))
    assert facts(incremental.analysis) != facts(previous)
    assert observed(incremental) == observed(check_source(edited))

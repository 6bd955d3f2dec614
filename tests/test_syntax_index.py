"""The shared node index (`torch_lsp.syntax_index`) holds exactly the nodes and parents a
full `ast.walk` of the tree gives, on every file the project ships and on syntax the
analysis walk reaches only partly (match patterns and guards, handlers, lambdas,
comprehensions, decorators, annotations); and `walk_nodes`, the faster `ast.walk`, yields
the same nodes in the same order."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from torch_lsp.analysis import analyze
from torch_lsp.syntax_index import statement_nodes, syntax_index
from torch_lsp.syntax_nodes import walk_nodes

REPO = Path(__file__).resolve().parents[1]

EDGE_CASES = '''
import torch
from torch import nn as tnn

@torch.no_grad()
def step(model: tnn.Module, *args, scale: float = 2.0, **kw) -> torch.Tensor:
    match model.kind:
        case torch.float32 | torch.float16 if torch.cuda.is_available():
            pass
        case {"x": [a, *rest]} if (f := lambda t=torch.zeros(1): t.require_grad):
            del a
        case tnn.Linear(in_features=n) as layer:
            return layer
    try:
        y = [p.numel() for p in model.parameters() if p.requires_grad]
    except (ValueError, torch.cuda.OutOfMemoryError) as error:
        raise RuntimeError(f"{error!r:>{scale}}") from error
    with torch.autocast("cuda") as ctx, open("f") as fh:
        x: torch.Tensor = torch.ones(2)[..., 1:2:1]
    global G
    return {k: v async for k, v in y} or (yield from ())

class Net(tnn.Module, metaclass=type):
    w = tnn.Parameter(torch.zeros(1))
'''


# Shared singletons (`Load()`, `Add()`, `And()`): the index makes no promise about them.
SINGLETONS = (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)


def _walked(tree: ast.AST) -> tuple[dict[type, set[int]], dict[int, int]]:
    by_type: dict[type, set[int]] = {}
    parents: dict[int, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, *SINGLETONS)):
            continue
        by_type.setdefault(type(node), set()).add(id(node))
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, SINGLETONS):
                parents[id(child)] = id(node)
    return by_type, parents


def _sources() -> list[tuple[str, str]]:
    files = sorted((REPO / "examples").glob("*.py")) + sorted((REPO / "tests" / "rules" / "fixtures").glob("*.py"))
    return [("edge_cases.py", EDGE_CASES)] + [(path.name, path.read_text(encoding="utf-8")) for path in files]


@pytest.mark.parametrize("name,source", _sources(), ids=lambda value: value if value.endswith(".py") else "")
def test_index_holds_every_node_and_parent_of_a_full_walk(name: str, source: str) -> None:
    analysis = analyze(source, name)
    index = syntax_index(analysis)
    by_type, parents = _walked(analysis.tree)
    assert by_type, "nothing parsed"
    for kind, ids in by_type.items():
        assert {id(node) for node in index.of_type(kind)} == ids, kind.__name__
    for node in ast.walk(analysis.tree):
        if id(node) in parents:
            parent = index.parent_of(node)
            assert parent is not None and id(parent) == parents[id(node)], ast.dump(node)[:80]
    for attr in ("require_grad", "requires_grad", "cuda"):
        expected = {id(n) for n in ast.walk(analysis.tree) if isinstance(n, ast.Attribute) and n.attr == attr}
        assert {id(n) for n in index.attributes_named(attr)} == expected


def test_top_level_statements_have_no_parent() -> None:
    analysis = analyze(EDGE_CASES, "edge_cases.py")
    assert all(syntax_index(analysis).parent_of(stmt) is None for stmt in analysis.tree.body)


@pytest.mark.parametrize("name,source", _sources(), ids=lambda value: value if value.endswith(".py") else "")
def test_walk_nodes_yields_what_ast_walk_yields_in_its_order(name: str, source: str) -> None:
    tree = ast.parse(source)
    subtrees = [tree, *(node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef)))]
    for root in subtrees:
        walked = list(walk_nodes(root))
        assert len(walked) == len(list(ast.walk(root)))
        assert all(mine is theirs for mine, theirs in zip(walked, ast.walk(root)))


def test_statements_of_a_type_come_in_source_order() -> None:
    analysis = analyze(EDGE_CASES + "\nx = 1\nif x:\n    y = 2\nz = 3\n", "edge_cases.py")
    assigns = syntax_index(analysis).of_type(ast.Assign)
    assert [a.lineno for a in assigns] == sorted(n.lineno for n in ast.walk(analysis.tree) if isinstance(n, ast.Assign))


@pytest.mark.parametrize("name,source", _sources()[:6] + [("edge_cases.py", EDGE_CASES)],
                         ids=lambda value: value if value.endswith(".py") else "")
def test_statement_nodes_are_the_nodes_of_a_walk_of_that_statement(name: str, source: str) -> None:
    analysis = analyze(source, name)
    for statement in analysis.tree.body:
        grouped = statement_nodes(analysis, statement)
        walked: dict[type, set[int]] = {}
        for node in ast.walk(statement):
            if not isinstance(node, SINGLETONS):
                walked.setdefault(type(node), set()).add(id(node))
        grouped = {kind: nodes for kind, nodes in grouped.items() if not issubclass(kind, SINGLETONS)}
        assert {kind: {id(node) for node in nodes} for kind, nodes in grouped.items()} == walked
        assert all(len(nodes) == len(walked[kind]) for kind, nodes in grouped.items())  # each node once

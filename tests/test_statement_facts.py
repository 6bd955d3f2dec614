"""Facts of single top-level statements kept across versions (`statement_facts`)."""
from __future__ import annotations

import ast

from torch_lsp.fact_cache import FactKey
from torch_lsp.statement_facts import StatementFacts

KEY: FactKey[str] = FactKey("test.resolved")


def test_values_under_two_file_facts_are_both_kept_across_versions():
    # The whole file's analysis and a part's read the same statements under different file
    # facts (what they import and rebind), version after version: neither replaces the other's.
    tree = ast.parse("import torch\nx = torch.zeros(3)\ny = x + 1\n")
    computed: list[tuple[str, str]] = []

    def resolve_under(facts: str):
        def compute(statement: ast.stmt) -> str:
            computed.append((facts, ast.unparse(statement)))
            return f"{facts}: {ast.unparse(statement)}"
        return compute

    whole, part = ("import torch", frozenset({"x", "y"})), ("import torch", frozenset({"x"}))
    version = StatementFacts(tree)
    for _ in range(3):  # three versions that keep every statement object
        assert version.each_under(KEY, whole, resolve_under("whole"))[1] == "whole: x = torch.zeros(3)"
        assert version.each_under(KEY, part, resolve_under("part"))[2] == "part: y = x + 1"
        version = StatementFacts(tree, version)
    assert len(computed) == 6  # once per statement and file facts, not once per version
    assert version.kept_file_facts(KEY, ("import torch", frozenset({"x"}))) is part
    assert version.kept_file_facts(KEY, ("import numpy", frozenset())) == ("import numpy", frozenset())


def test_the_walk_of_an_unchanged_top_level_def_is_taken_over():
    # An edit inside `train` walks `train` again; `Net` and `evaluate`, the same statement objects,
    # keep what their walk handed out (their functions are the very same objects), under this
    # version's module scope.
    from torch_lsp.analysis import analyze

    source = ("import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def forward(self, x):\n"
              "        return x\n\n\ndef train(model, x):\n    return model(x)\n\n\n@torch.no_grad()\n"
              "def evaluate(model, x):\n    return model(x)\n")
    first = analyze(source, "f.py")
    edited = analyze(source.replace("return model(x)\n\n\n@", "return model(x + 1)\n\n\n@"), "f.py", previous=first.parsed)
    before = {f.name: f for f in first.functions}
    after = {f.name: f for f in edited.functions}
    assert after["forward"] is before["forward"] and after["evaluate"] is before["evaluate"]
    assert after["train"] is not before["train"]
    assert edited.context(after["evaluate"].node).function is edited.module_scope
    assert edited.classes["Net"] is first.classes["Net"] and after["evaluate"].no_grad_decorated

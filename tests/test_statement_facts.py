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

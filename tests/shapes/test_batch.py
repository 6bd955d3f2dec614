"""`inferred_shape`: the shape pass as TL202 reads it (which dim is the batch)."""
from __future__ import annotations

import ast
import textwrap

from torch_lsp.analysis import analyze
from torch_lsp.shapes.batch import inferred_shape

SOURCE = textwrap.dedent('''\
    import torch
    import torch.nn as nn


    class AttentionPool(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.score = nn.Linear(dim, 1)

        def forward(self, x):
            B, T, C = x.shape
            scores = self.score(x)
            similarity = x @ x.transpose(0, 2).flatten(1)[:B]
            return scores, similarity


    def demo():
        return AttentionPool(16)(torch.randn(4, 7, 16))
''')


def node_named(analysis, name: str, line: int) -> ast.AST:
    return next(n for n in ast.walk(analysis.tree)
                if isinstance(n, ast.Name) and n.id == name and n.lineno == line)


def test_a_batch_symbol_first_is_the_batch_even_with_a_concrete_call_site():
    analysis = analyze(SOURCE, "pool.py")
    shape = inferred_shape(analysis, node_named(analysis, "scores", 12))
    assert shape is not None and shape.rank == 3 and shape.batch_first
    assert shape.origin == "`self.score: Linear(dim → 1)` on line 12"
    assert shape.stated_by is None


def test_concrete_or_unknown_first_dims_are_not_the_batch():
    analysis = analyze("import torch\nx = torch.zeros(8, 3)\ny = torch.zeros(3)\n", "plain.py")
    shape = inferred_shape(analysis, node_named(analysis, "x", 2))
    assert shape is not None and shape.rank == 2 and not shape.batch_first
    assert inferred_shape(analysis, node_named(analysis, "y", 3)).rank == 1


def test_unknown_tensors_have_no_inferred_shape():
    analysis = analyze("import torch\nx = torch.load('a.pt')\n", "load.py")
    assert inferred_shape(analysis, node_named(analysis, "x", 2)) is None

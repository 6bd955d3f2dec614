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


BUILT = textwrap.dedent('''\
    import torch


    def scores_of(q, k, feature_map, hidden):
        logits = torch.bmm(q, k)
        scaled = logits / q.size(-1) ** 0.5
        heads = torch.einsum("bnd,bmd->bnm", q, k)
        pairs = torch.einsum("bd,cd->bc", q, k)
        flat = feature_map.flatten(1)
        swapped = logits.transpose(0, 1)
        B, T, C = hidden.shape
        last = hidden[:, -1]
        return scaled, heads, pairs, flat, swapped, last
''')


def test_how_a_tensor_was_built_says_its_dim_0_is_the_batch():
    analysis = analyze(BUILT, "built.py")
    scaled = inferred_shape(analysis, node_named(analysis, "scaled", 13))
    assert scaled.rank == 3 and scaled.batch_first
    assert scaled.origin == "`torch.bmm(q, k)` on line 5, whose dim 0 is the batch"
    heads = inferred_shape(analysis, node_named(analysis, "heads", 13))
    assert heads.rank == 3 and heads.batch_first
    flat = inferred_shape(analysis, node_named(analysis, "flat", 13))
    assert flat.rank == 2 and flat.batch_first and flat.origin == "`feature_map.flatten(1)` on line 9"


def test_dim_0_moved_or_not_led_by_the_batch_is_not_the_batch():
    analysis = analyze(BUILT, "built.py")
    assert not inferred_shape(analysis, node_named(analysis, "pairs", 13)).batch_first
    swapped = inferred_shape(analysis, node_named(analysis, "swapped", 13))
    assert swapped is not None and not swapped.batch_first


def test_the_origin_follows_dim_0_back_and_is_quoted_once():
    analysis = analyze(BUILT, "built.py")
    last = inferred_shape(analysis, node_named(analysis, "last", 13))
    assert last.batch_first and last.origin == "`B, T, C = hidden.shape` on line 11"


def test_a_tensor_scaled_by_an_unknown_name_keeps_its_shape():
    source = textwrap.dedent('''\
        import torch


        def routing(batch, n_experts, temperature, mask):
            noise = torch.randn(batch, n_experts)
            return noise / temperature, -noise, noise @ mask
    ''')
    analysis = analyze(source, "route.py")
    scaled, negated, product = next(n for n in ast.walk(analysis.tree) if isinstance(n, ast.Return)).value.elts
    for node in (scaled, negated):
        shape = inferred_shape(analysis, node)
        assert shape is not None and shape.rank == 2 and shape.batch_first
        assert shape.origin == "`torch.randn(batch, n_experts)` on line 5"
    assert inferred_shape(analysis, product) is None


def test_a_product_with_a_swap_behind_dim_1_is_a_batch_of_matrices_of_unknown_rank():
    source = textwrap.dedent('''\
        import torch


        def scores(q, k):
            s = q @ k.transpose(1, 2) / 8
            return s, torch.matmul(q, k.swapaxes(3, 2)), q @ k.transpose(-2, -1), q @ k.transpose(0, 1), s[0]
    ''')
    analysis = analyze(source, "attn.py")
    batched, swapped, last_two, two_d, indexed = next(
        n for n in ast.walk(analysis.tree) if isinstance(n, ast.Return)).value.elts
    for node in (batched, swapped):
        shape = inferred_shape(analysis, node)
        assert shape is not None and shape.batch_first and not shape.rank_known
    assert inferred_shape(analysis, batched).origin == "`q @ k.transpose(1, 2)` on line 5, a batch of matrix products"
    for node in (last_two, two_d, indexed):
        assert inferred_shape(analysis, node) is None

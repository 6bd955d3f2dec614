"""Shape rules of tensor operations (`torch_lsp.shapes.ops`, and the conv/pool arithmetic of
`torch_lsp.shapes.layers.conv_pool`) on abstract tensors."""
from __future__ import annotations

import pytest

from torch_lsp.shapes import ops
from torch_lsp.shapes.dims import Dim, parse_dim
from torch_lsp.shapes.layers import conv_pool
from torch_lsp.shapes.ops import WILDCARD, ShapeError
from torch_lsp.shapes.values import Tensor


def t(*dims, variadic: bool = False, dtype=None) -> Tensor:
    return Tensor(tuple(None if x is None else (Dim.const(x) if isinstance(x, int) else parse_dim(x)) for x in dims),
                  variadic, dtype)


def shape(tensor: Tensor) -> list:
    return tensor.to_json()


class TestBroadcast:
    def test_aligns_from_the_right(self):
        assert shape(ops.broadcast([t(4, 1, 5), t(3, 1)])) == [4, 3, 5]

    def test_symbolic_sizes(self):
        assert shape(ops.broadcast([t("B", "T", "C"), t("C")])) == ["B", "T", "C"]
        assert shape(ops.broadcast([t("B", 1), t(1, 8)])) == ["B", 8]
        # B and T may each be 1: the result is not known
        assert shape(ops.broadcast([t("B"), t("T")])) == ["?"]
        # a concrete size that is not 1 wins: the other must be 1 or equal to it
        assert shape(ops.broadcast([t("n"), t(8)])) == [8]

    def test_unknown_leading_dims(self):
        assert shape(ops.broadcast([t(128, variadic=True), t(5, 1)])) == ["*", 5, 128]

    def test_failure_only_for_two_concrete_sizes(self):
        with pytest.raises(ShapeError):
            ops.broadcast([t(4, 10), t(12)])
        ops.broadcast([t("n", 10), t("n+1", 10)])  # n may be 1: not a sure failure


class TestMatmul:
    def test_batched(self):
        assert shape(ops.matmul(t(2, 8, 10, 16), t(2, 8, 16, 12), None)) == [2, 8, 10, 12]
        assert shape(ops.matmul(t(10, 1, 3, 4), t(6, 4, 2), None)) == [10, 6, 3, 2]

    def test_vectors(self):
        assert shape(ops.matmul(t(4), t(4), None)) == []
        assert shape(ops.matmul(t(7, 4), t(4), None)) == [7]
        assert shape(ops.matmul(t(4), t(3, 4, 5), None)) == [3, 5]

    def test_inner_mismatch(self):
        with pytest.raises(ShapeError):
            ops.matmul(t(2, 3), t(4, 5), None)
        with pytest.raises(ShapeError):
            ops.matmul(t("B", "T", "d"), t("d+1", 5), None)
        ops.matmul(t("B", "T", "d"), t("e", 5), None)  # may be equal

    def test_bmm_needs_equal_batches(self):
        with pytest.raises(ShapeError):
            ops.bmm(t(8, 2, 3), t(4, 3, 5), None)
        assert shape(ops.bmm(t("B", 2, 3), t("B", 3, 5), None)) == ["B", 2, 5]

    def test_linear_with_unknown_leading_dims(self):
        assert shape(ops.linear(t(128, variadic=True), Dim.const(128), Dim.const(10), None)) == ["*", 10]

    def test_dtypes(self):
        """A linear layer's output is floating point whatever fed it; a matrix product keeps
        its operands' common dtype (unknown when they differ)."""
        assert ops.linear(t(4, 8), Dim.const(8), Dim.const(2), None).dtype == "float"
        assert ops.linear(t(8, variadic=True), Dim.const(8), Dim.const(2), None).dtype == "float"
        assert ops.matmul(t(2, 3, dtype="float"), t(3, 4, dtype="float"), None).dtype == "float"
        assert ops.matmul(t(2, 3, dtype="long"), t(3, dtype="long"), None).dtype == "long"
        assert ops.matmul(t(2, 3, dtype="float"), t(3, 4), None).dtype is None
        assert ops.bmm(t(5, 2, 3, dtype="float"), t(5, 3, 4, dtype="float"), None).dtype == "float"

    def test_broadcast_promotes_by_kind(self):
        """As torch's type promotion: the highest kind wins, a Python number (a 0-d operand)
        included (`torch.rand(3) * 10` is float, `torch.arange(3) * 2` stays int64)."""
        assert ops.broadcast([t(4, dtype="float"), t(dtype="long")]).dtype == "float"
        assert ops.broadcast([t(4, dtype="long"), t(dtype="long")]).dtype == "long"
        assert ops.broadcast([t(4, dtype="long"), t(dtype="float")]).dtype == "float"
        assert ops.broadcast([t(4, dtype="bool"), t(4, dtype="float")]).dtype == "float"
        assert ops.broadcast([t(4, dtype="long"), t(4)]).dtype is None

    def test_einsum(self):
        assert shape(ops.einsum("bhqd,bhkd->bhqk", [t(2, 8, 10, 16), t(2, 8, 12, 16)], None)) == [2, 8, 10, 12]
        assert shape(ops.einsum("ij,jk", [t(3, 4), t(4, 5)], None)) == [3, 5]
        assert shape(ops.einsum("...ij,...jk->...ik", [t(9, 3, 4), t(9, 4, 5)], None)) == [9, 3, 5]

    def test_einsum_subscripts_must_agree(self):
        """As torch: a subscript's known sizes must match, a size 1 broadcasts, a symbolic size
        (which may be 1) is never judged."""
        with pytest.raises(ShapeError, match="subscript `d` is 64 .* and 32"):
            ops.einsum("bhqd,bhkd->bhqk", [t(2, 8, 16, 64), t(2, 8, 16, 32)], None)
        with pytest.raises(ShapeError, match="subscript `i` is 3 in the same operand and 2"):
            ops.einsum("ii->i", [t(3, 2)], None)
        with pytest.raises(ShapeError, match="`...` dims"):
            ops.einsum("...ij,...jk->...ik", [t(9, 3, 4), t(7, 4, 5)], None)
        assert shape(ops.einsum("bd,nd->bn", [t(3, 1), t(4, 5)], None)) == [3, 4]
        assert shape(ops.einsum("bd,nd->bn", [t(3, "d"), t(4, 5)], None)) == [3, 4]


class TestViews:
    def test_view_with_wildcard(self):
        assert shape(ops.view(t(2, 3, 4, 5), [Dim.const(2), WILDCARD], None)) == [2, 60]
        assert shape(ops.view(t("B", "T", "C"), [parse_dim("B*T"), WILDCARD], None)) == ["B*T", "C"]
        heads = ops.view(t("B", "T", "C"), [parse_dim("B"), parse_dim("T"), parse_dim("nh"), WILDCARD], None)
        assert shape(heads) == ["B", "T", "nh", "C//nh"]

    def test_element_count_mismatch(self):
        with pytest.raises(ShapeError):
            ops.view(t(2, 3, 4), [Dim.const(5), WILDCARD], None)
        with pytest.raises(ShapeError):
            ops.view(t(12), [Dim.const(3), Dim.const(5)], None)
        ops.view(t("n"), [Dim.const(3), Dim.const(5)], None)  # n may be 15

    def test_flatten_and_unflatten(self):
        assert shape(ops.flatten(t(2, 3, 4, 5), 1, -1, None)) == [2, 60]
        assert shape(ops.flatten(t("H", "W", variadic=True), -2, -1, None)) == ["*", "H*W"]
        assert shape(ops.unflatten(t(2, 60), 1, [Dim.const(3), WILDCARD], None)) == [2, 3, 20]

    def test_reordering(self):
        assert shape(ops.permute(t(2, 3, 4), [2, 0, 1], None)) == [4, 2, 3]
        assert shape(ops.transpose(t("T", "C", variadic=True), -2, -1, None)) == ["*", "C", "T"]
        assert shape(ops.movedim(t(2, 3, 4), [0], [2], None)) == [3, 4, 2]

    def test_squeeze_keeps_symbolic_sizes_unknown(self):
        assert shape(ops.squeeze(t(3, 1, 4), [1], None)) == [3, 4]
        assert shape(ops.squeeze(t(3, 1, 4), None, None)) == [3, 4]
        assert not ops.squeeze(t("B", 1), None, None).has_shape  # B may be 1 too
        assert shape(ops.unsqueeze(t(3, 4), -1, None)) == [3, 4, 1]

    def test_expand_and_repeat(self):
        assert shape(ops.expand(t(3, 1), [Dim.const(3), Dim.const(4)], None)) == [3, 4]
        assert shape(ops.expand(t(1, 1, "E"), [parse_dim("B"), WILDCARD, WILDCARD], None)) == ["B", 1, "E"]
        with pytest.raises(ShapeError):
            ops.expand(t(3, 2), [Dim.const(3), Dim.const(4)], None)
        assert shape(ops.repeat(t(2, 3), [Dim.const(2), Dim.const(2)], None)) == [4, 6]


class TestIndexing:
    def test_ints_slices_and_new_axes(self):
        x = t(8, 6, 5)
        assert shape(ops.index(x, [Dim.const(0)], None)) == [6, 5]
        assert shape(ops.index(x, [ops.Slice(None, None, None), ops.Slice(Dim.const(1), Dim.const(4), None)], None)) == [8, 3, 5]
        assert shape(ops.index(x, [ops.ELLIPSIS, Dim.const(-1)], None)) == [8, 6]
        assert shape(ops.index(x, [ops.NEWAXIS], None)) == [1, 8, 6, 5]
        assert shape(ops.index(t("T", 4), [ops.Slice(None, Dim.const(-1), None)], None)) == ["T-1", 4]

    def test_advanced(self):
        assert shape(ops.index(t(8, 6), [t(3, dtype="long")], None)) == [3, 6]
        assert shape(ops.index(t(8, 6), [t(8, 6, dtype="bool")], None)) == ["?"]
        assert not ops.index(t(8, 6), [t(3)], None).has_shape  # index dtype unknown

    def test_index_past_a_concrete_size(self):
        with pytest.raises(ShapeError):
            ops.index(t(3, 4), [Dim.const(5)], None)
        ops.index(t("n", 4), [Dim.const(5)], None)


class TestJoining:
    def test_cat(self):
        assert shape(ops.cat([t(2, 3), t(5, 3)], 0, None)) == [7, 3]
        assert shape(ops.cat([t("B", "T"), t("B", 1)], 1, None)) == ["B", "T+1"]
        with pytest.raises(ShapeError):
            ops.cat([t(2, 3), t(2, 4)], 0, None)

    def test_stack(self):
        assert shape(ops.stack([t(2, 3), t(2, 3)], 1, Dim.const(2), None)) == [2, 2, 3]
        with pytest.raises(ShapeError):
            ops.stack([t(3, 4), t(3, 5)], 0, Dim.const(2), None)

    def test_split_sizes(self):
        assert [d.render() for d in ops.split_sizes(Dim.const(10), Dim.const(4))] == ["4", "4", "2"]
        assert [d.render() for d in ops.split_sizes(parse_dim("3*n"), parse_dim("n"))] == ["n", "n", "n"]
        assert ops.split_sizes(parse_dim("m"), parse_dim("n")) is None
        assert [d.render() for d in ops.chunk_sizes(parse_dim("2*h"), 2)] == ["h", "h"]


class TestReductionsAndSpatial:
    def test_reduce(self):
        assert shape(ops.reduce(t(4, 5, 6), [1], False, None)) == [4, 6]
        assert shape(ops.reduce(t(4, 5, 6), [-1], True, None)) == [4, 5, 1]
        assert shape(ops.reduce(t(4, 5, 6), None, False, None)) == []
        assert shape(ops.reduce(t("C", variadic=True), [-1], False, None)) == ["*"]

    @pytest.mark.parametrize("size, kernel, stride, padding, dilation, out", [
        (32, 3, 1, 1, 1, "32"), (32, 3, 2, 1, 1, "16"), (28, 5, 1, 0, 1, "24"), (32, 5, 1, 0, 2, "24"),
        ("H", 3, 2, 0, 1, "(H-3)//2+1"), ("H", 3, 1, 1, 1, "H"),
    ])
    def test_conv_output(self, size, kernel, stride, padding, dilation, out):
        dims = [Dim.const(x) if isinstance(x, int) else parse_dim(x) for x in (size, kernel, stride, padding, dilation)]
        assert conv_pool.conv_output(*dims).render() == out

    def test_transposed_and_ceil_mode(self):
        one, two, four, zero = (Dim.const(x) for x in (1, 2, 4, 0))
        assert conv_pool.conv_transpose_output(Dim.const(16), four, two, one, one, zero).render() == "32"
        assert conv_pool.pool_output(Dim.const(15), two, two, zero, one, True).render() == "8"
        assert conv_pool.pool_output(Dim.const(15), two, two, zero, one, False).render() == "7"


def test_batched_products_of_unknown_operands_keep_their_rank():
    from torch_lsp.analysis import analyze
    from torch_lsp.shapes import infer_shapes

    source = "import torch\n\ndef f(a, b):\n    x = torch.bmm(a, b)\n    y = torch.einsum('bij,bjk->bik', a, b)\n    return x, y\n"
    report = infer_shapes(analyze(source, "ops.py"))
    shapes = {b.name: b.tensor.render() for b in report.bindings}
    assert shapes == {"x": "[?, ?, ?]", "y": "[?, ?, ?]"}


def _shapes_and_errors(source: str) -> tuple[dict[str, str], list[str]]:
    from torch_lsp.analysis import analyze
    from torch_lsp.shapes import infer_shapes

    report = infer_shapes(analyze(source, "ops.py"))
    return {b.name: b.tensor.render() for b in report.bindings}, [m.message for m in report.mismatches]


def test_unfold_cuts_patches_as_torch_does():
    """`F.unfold` is im2col: sizes checked against torch 2.13 (`[4, 192, 16]`, `[4, 27, 1024]`,
    `[4, 24, 128]`, `[27, 48]`)."""
    shapes, errors = _shapes_and_errors(
        "import torch\nimport torch.nn.functional as F\n"
        "x = torch.randn(4, 3, 32, 32)\n"
        "a = F.unfold(x, kernel_size=8, stride=8)\n"
        "b = F.unfold(x, 3, padding=1)\n"
        "c = F.unfold(x, (2, 4), stride=(2, 4))\n"
        "d = F.unfold(torch.randn(3, 10, 12), kernel_size=3, dilation=2)\n")
    assert (shapes["a"], shapes["b"], shapes["c"], shapes["d"]) == ("[4, 192, 16]", "[4, 27, 1024]", "[4, 24, 128]", "[27, 48]")
    assert errors == []


def test_bmm_of_a_matrix_is_an_error():
    _, errors = _shapes_and_errors("import torch\nw = torch.randn(4, 15)\ny = torch.bmm(w, torch.randn(4, 15, 256))\n"
                                   "z = torch.bmm(w.unsqueeze(1), torch.randn(4, 15, 256))\n")
    assert len(errors) == 1 and "takes two 3-D batches of matrices" in errors[0] and "[4, 15]" in errors[0]


def test_recurrent_initial_state_must_match():
    """torch checks `h_0` (and `c_0`) exactly: `num_layers * num_directions` first."""
    _, errors = _shapes_and_errors(
        "import torch\nfrom torch import nn\n"
        "rnn = nn.LSTM(64, 128, num_layers=2, batch_first=True, bidirectional=True)\n"
        "x = torch.randn(4, 15, 64)\n"
        "bad = rnn(x, (torch.zeros(2, 4, 128), torch.zeros(2, 4, 128)))\n"
        "good = rnn(x, (torch.zeros(4, 4, 128), torch.zeros(4, 4, 128)))\n"
        "gru = nn.GRU(64, 32)\n"
        "ok = gru(torch.randn(10, 4, 64), torch.zeros(1, 4, 32))\n"
        "wide = gru(torch.randn(10, 4, 64), hx=torch.zeros(1, 4, 64))\n"
        "proj = nn.LSTM(8, 16, proj_size=4)(torch.randn(3, 2, 8), (torch.zeros(1, 2, 4), torch.zeros(1, 2, 16)))\n")
    assert len(errors) == 2
    assert "initial state of [4, 4, 128]" in errors[0] and "[2, 4, 128]" in errors[0]
    assert "initial state of [1, 4, 32]" in errors[1] and "[1, 4, 64]" in errors[1]


def test_containers_changed_in_place_are_not_read_stale():
    """`config.update(...)`, `config["k"] = v`, `del`, `net[-1] = ...`, `net.append(...)`: what
    was known before the change is never used after it (the update is applied where it is sure)."""
    shapes, errors = _shapes_and_errors(
        "import torch\nfrom torch import nn\n"
        "config = {'in_dim': 32, 'hidden': 64, 'drop': 0.1}\n"
        "config.update(in_dim=16)\n"
        "config['hidden'] = 8\n"
        "a = nn.Linear(config['in_dim'], config['hidden'])(torch.randn(2, 16))\n"
        "config.update(other)\n"
        "b = nn.Linear(config['in_dim'], 4)(torch.randn(2, 16))\n"
        "net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 10))\n"
        "net[-1] = nn.Linear(32, 4)\n"
        "c = net(torch.randn(3, 16)) + torch.zeros(3, 4)\n"
        "seq = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 10))\n"
        "seq.append(nn.Linear(10, 2))\n"
        "d = seq(torch.randn(3, 16)) + torch.zeros(3, 2)\n"
        "del seq[-1]\n"
        "e = seq(torch.randn(3, 16))\n")
    assert errors == []
    assert shapes["a"] == "[2, 8]"
    assert "c" not in shapes and "d" not in shapes and "e" not in shapes  # unknown, not [3, 10]


def test_an_empty_tensor_kept_on_the_module_is_a_placeholder():
    """`self.kv_cache = (torch.tensor([]), torch.tensor([]))` in `__init__`, filled by an allocator
    outside the file (torchtitan's GDN layer under vLLM): the methods do not read it as a
    0-element tensor; a real tensor kept the same way still is known."""
    shapes, errors = _shapes_and_errors(
        "import torch\nfrom torch import nn\n"
        "class Layer(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.kv_cache = (torch.tensor([]), torch.tensor([]))\n"
        "        self.buf = torch.empty(0)\n"
        "        self.mix = torch.zeros(4, 8)\n"
        "    def forward(self, x):\n"
        "        conv = self.kv_cache[0].transpose(-1, -2)\n"
        "        flat = self.buf.view(2, -1)\n"
        "        return conv, flat, self.mix.transpose(-1, -3)\n")
    assert len(errors) == 1 and "self.mix.transpose" in errors[0]

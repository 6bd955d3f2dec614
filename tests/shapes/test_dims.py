"""The dims algebra: canonical forms, simplification, rendering, evaluation."""
from __future__ import annotations

import pytest

from torch_lsp.shapes.dims import Dim, parse_dim


def d(text: str) -> Dim:
    dim = parse_dim(text, slash_is_floordiv=False)
    assert dim is not None, text
    return dim


@pytest.mark.parametrize("text, rendered", [
    ("3*n_embd", "3*n_embd"),
    ("n_embd*3", "3*n_embd"),
    ("(H-3)//2+1", "(H-3)//2+1"),
    ("(H+2*1-1*(3-1)-1)//1+1", "H"),  # conv with padding 1, kernel 3, stride 1 keeps the size
    ("(H-P)//P+1", "H//P"),  # patch embedding: kernel == stride
    ("((H-P)//P+1)*((W-P)//P+1)", "(H//P)*(W//P)"),
    ("n_embd//n_head", "n_embd//n_head"),
    ("2*(C//h)", "2*(C//h)"),
    ("B*T*C//(B*T)", "C"),
    ("(4*C)//(2*C)", "2"),
    ("(2*H-2)//4", "(H-1)//2"),
    ("n - n", "0"),
    ("a + b - a", "b"),
    ("7 // 2", "3"),
    ("-7 // 2", "-4"),
    ("(6*x + 4)//2", "3*x+2"),
])
def test_simplifies_to_the_canonical_form(text, rendered):
    assert d(text).render() == rendered


def test_equal_sizes_have_equal_forms():
    assert d("n_embd*3") == d("3*n_embd") == d("n_embd+2*n_embd")
    assert hash(d("B*T")) == hash(d("T*B"))
    assert d("(H-3)//2+1") != d("(H+1)//2-1")  # equal for every H, but not known to be: never claimed


def test_surely_different_by_a_constant_or_a_multiple():
    assert d("n+1").differs_from(d("n"))
    assert d("8").differs_from(d("16"))
    assert not d("n").differs_from(d("m"))  # may be equal
    assert not d("n").differs_from(d("n"))
    # sizes are positive: 2*hidden is never hidden, 4*d never d, whatever the symbols are
    assert d("2*n").differs_from(d("n")) and d("n").differs_from(d("2*n"))
    assert d("4*d").differs_from(d("d")) and d("2*d").differs_from(d("4*d"))
    assert d("2*a*b").differs_from(d("a*b")) and d("2*d+2").differs_from(d("d+1"))
    assert not d("2*d-2").differs_from(d("d-1"))  # both 0 when d is 1
    assert not d("d*h").differs_from(d("d"))  # equal when h is 1
    assert not d("2*(H//2)").differs_from(d("H"))  # equal for every even H
    assert not d("3*d").differs_from(d("2*d"))  # true, but not a multiple: not claimed


def test_evaluation_and_substitution():
    conv = d("(H-3)//2+1")
    assert conv.evaluate({"H": 32}) == 15
    assert conv.evaluate({}) is None
    assert conv.substitute({"H": Dim.const(28)}).as_int() == 13
    assert d("3*n_embd").substitute({"n_embd": d("h*k")}) == d("3*h*k")


def test_comment_division_reads_as_floor_division():
    assert parse_dim("H/2") == d("H//2")
    assert parse_dim("not a size!") is None
    assert parse_dim("f(x)") is None


def test_division_by_zero_and_large_expressions_are_unknown():
    assert Dim.const(4).floordiv(Dim.const(0)) is None
    big = d("a*b*c*d")
    assert (big * big).is_too_large()
    assert parse_dim("a*b*c*d*a*b*c*d") is None


def test_json_form():
    assert Dim.const(8).to_json() == 8
    assert d("3*n_embd").to_json() == "3*n_embd"


def test_a_product_with_an_exact_division_reads_as_the_code_assumes():
    from torch_lsp.shapes.dims import assuming_divisible

    heads, channels = Dim.symbol("heads"), Dim.symbol("C")
    per_head = channels.floordiv(heads)
    assert heads * per_head != channels
    assert assuming_divisible(heads * per_head) == channels
    assert assuming_divisible(Dim.symbol("B") * heads * per_head) == Dim.symbol("B") * channels
    assert assuming_divisible(per_head) == per_head

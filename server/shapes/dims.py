"""Sizes of tensor dimensions: integers, symbols and the arithmetic shapes need.

A `Dim` is a polynomial with integer coefficients over *atoms*: symbols (`B`,
`n_embd`) and floor divisions that do not simplify (`(H-3)//2`).  Every `Dim` is
kept in one canonical form, so two sizes are equal exactly when their forms are
equal, and a difference that is a non-zero integer proves two sizes differ
(`n` and `n+1`).  Sizes are positive integers, which is what lets
`(4*C)//(2*C)` cancel to `2`.

This is deliberately small (no sympy: its import alone costs more than the whole
shape pass): `+`, `-`, `*`, `//` and `%` by a constant, substitution, evaluation,
and rendering in the way people write sizes (`3*n_embd`, `(H-3)//2+1`).
"""
from __future__ import annotations

import ast
import math
from typing import Iterable, Mapping, Union

from torch_lsp import memos

MAX_TERMS = 12  # larger expressions are not worth showing: they become unknown
MAX_DEGREE = 6


class Atom:
    """A factor that does not simplify further: a symbol or an opaque floor division."""

    __slots__ = ("key",)
    key: str

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Atom) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)

    def __lt__(self, other: "Atom") -> bool:
        return self.key < other.key


class Symbol(Atom):
    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name
        self.key = name

    def render(self, alone: bool) -> str:
        return self.name

    def substitute(self, mapping: Mapping[str, "Dim"]) -> "Dim":
        replacement = mapping.get(self.name)
        return replacement if replacement is not None else Dim.symbol(self.name)

    def symbols(self) -> set[str]:
        return {self.name}


class FloorDiv(Atom):
    __slots__ = ("numerator", "denominator")

    def __init__(self, numerator: "Dim", denominator: "Dim"):
        self.numerator = numerator
        self.denominator = denominator
        self.key = "\x7f" + numerator.render() + "//" + denominator.render()  # after every symbol

    def render(self, alone: bool) -> str:
        top = self.numerator.render()
        if not self.numerator._is_single_factor():
            top = f"({top})"
        bottom = self.denominator.render()
        if not self.denominator._is_single_factor():
            bottom = f"({bottom})"
        text = f"{top}//{bottom}"
        return text if alone else f"({text})"

    def substitute(self, mapping: Mapping[str, "Dim"]) -> "Dim":
        return self.numerator.substitute(mapping).floordiv(self.denominator.substitute(mapping)) or Dim.atom(self)

    def symbols(self) -> set[str]:
        return self.numerator.symbols() | self.denominator.symbols()


Monomial = tuple  # tuple[Atom, ...], sorted, repeated for powers; () is the constant term
_CONSTANTS: dict[int, "Dim"] = {}
_SYMBOLS: dict[str, "Dim"] = {}
# Results of `+` and `*` (the shape pass repeats the same size arithmetic in every call
# context and loop pass), keyed by the operands' identities: each entry keeps its
# operands alive, so their ids stay theirs.  Cleared when full, so it stays small.
_SUMS: dict[tuple[int, int], tuple["Dim", "Dim", "Dim"]] = {}
_PRODUCTS: dict[tuple[int, int], tuple["Dim", "Dim", "Dim"]] = {}
MAX_MEMO = 8192
memos.register(_SUMS.clear, _PRODUCTS.clear, _SYMBOLS.clear, _CONSTANTS.clear)


class Dim:
    """An integer-valued size expression in canonical form (immutable, hashable)."""

    __slots__ = ("terms", "_hash")

    def __init__(self, terms: Iterable[tuple[Monomial, int]] = ()):
        collected: dict[Monomial, int] = {}
        for monomial, coefficient in terms:
            if coefficient:
                collected[monomial] = collected.get(monomial, 0) + coefficient
        self.terms: tuple[tuple[Monomial, int], ...] = tuple(
            sorted(((m, c) for m, c in collected.items() if c), key=_term_order)
        )
        self._hash = hash(self.terms)

    # -- construction -----------------------------------------------------------------
    @staticmethod
    def const(value: int) -> "Dim":
        value = int(value)
        cached = _CONSTANTS.get(value)
        if cached is None:
            cached = Dim((((), value),))
            if -64 <= value <= 4096:
                _CONSTANTS[value] = cached
        return cached

    @staticmethod
    def symbol(name: str) -> "Dim":
        cached = _SYMBOLS.get(name)
        if cached is None:
            cached = Dim((((Symbol(name),), 1),))
            if len(_SYMBOLS) < 4096:
                _SYMBOLS[name] = cached
        return cached

    @staticmethod
    def atom(atom: Atom) -> "Dim":
        return Dim((((atom,), 1),))

    @staticmethod
    def _canonical(terms: tuple[tuple[Monomial, int], ...]) -> "Dim":
        """A Dim of terms already in canonical form (distinct monomials, in order, no zero)."""
        dim = object.__new__(Dim)
        dim.terms = terms
        dim._hash = hash(terms)
        return dim

    # -- queries ----------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        return self is other or isinstance(other, Dim) and self.terms == other.terms

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"Dim({self.render()})"

    def __str__(self) -> str:
        return self.render()

    def as_int(self) -> int | None:
        terms = self.terms
        if not terms:
            return 0
        if len(terms) == 1:
            monomial, coefficient = terms[0]
            if not monomial:
                return coefficient
        return None

    @property
    def is_int(self) -> bool:
        return self.as_int() is not None

    def symbols(self) -> set[str]:
        found: set[str] = set()
        for monomial, _ in self.terms:
            for atom in monomial:
                found |= atom.symbols()
        return found

    def _is_single_factor(self) -> bool:
        """One atom or one constant, without a coefficient: prints without parentheses."""
        if len(self.terms) != 1:
            return not self.terms
        monomial, coefficient = self.terms[0]
        return (monomial == () and coefficient >= 0) or (len(monomial) == 1 and coefficient == 1
                                                         and isinstance(monomial[0], Symbol))

    def differs_from(self, other: "Dim") -> bool:
        """True when the two sizes are surely different: their difference is a non-zero integer
        (`n` and `n+1`), or one is a multiple of the other other than itself (`2*hidden` and
        `hidden`: sizes are positive, so they differ whatever `hidden` is)."""
        if self is other or self.terms == other.terms:
            return False
        difference = (self - other).as_int()
        if difference is not None:
            return difference != 0
        return _proportional(self, other) or _proportional(other, self)

    # -- arithmetic -------------------------------------------------------------------
    def __add__(self, other: "Dim") -> "Dim":
        if not other.terms:
            return self
        if not self.terms:
            return other
        key = (id(self), id(other))
        found = _SUMS.get(key)
        if found is not None and found[0] is self and found[1] is other:
            return found[2]
        result = Dim(self.terms + other.terms)
        _remember(_SUMS, key, (self, other, result))
        return result

    def __neg__(self) -> "Dim":
        # Negating every coefficient keeps the canonical order (it never depends on them).
        return Dim._canonical(tuple([(m, -c) for m, c in self.terms]))

    def __sub__(self, other: "Dim") -> "Dim":
        return self + (-other)

    def __mul__(self, other: "Dim") -> "Dim":
        key = (id(self), id(other))
        found = _PRODUCTS.get(key)
        if found is not None and found[0] is self and found[1] is other:
            return found[2]
        product = []
        for m1, c1 in self.terms:
            for m2, c2 in other.terms:
                product.append((tuple(sorted(m1 + m2)), c1 * c2))
        result = Dim(product)
        _remember(_PRODUCTS, key, (self, other, result))
        return result

    def scale(self, factor: int) -> "Dim":
        if not factor:
            return Dim()
        return Dim._canonical(tuple([(m, c * factor) for m, c in self.terms]))

    def floordiv(self, other: "Dim") -> "Dim | None":
        """`self // other`, simplified where that is exact; None for a division by zero."""
        divisor = other.as_int()
        if divisor is not None:
            return self._floordiv_int(divisor)
        value = self.as_int()
        if value == 0:
            return Dim()
        exact = self.divide_exactly(other)
        if exact is not None:
            return exact
        if len(other.terms) == 1:
            # (Q*D + R)//D == Q + R//D for every integer-valued Q: `(H-P)//P` is `H//P-1`.
            monomial, coefficient = other.terms[0]
            whole, rest = [], []
            for m, c in self.terms:
                remaining = _remove_factors(m, monomial)
                if remaining is not None and c % coefficient == 0:
                    whole.append((remaining, c // coefficient))
                else:
                    rest.append((m, c))
            if whole and rest:
                remainder = Dim(rest).floordiv(other)
                return Dim(whole) + remainder if remainder is not None else None
        numerator, denominator = _cancel_common(self, other)
        if denominator.as_int() is not None:
            return numerator._floordiv_int(denominator.as_int())
        return Dim.atom(FloorDiv(numerator, denominator))

    def _floordiv_int(self, divisor: int) -> "Dim | None":
        if divisor == 0:
            return None
        value = self.as_int()
        if value is not None:
            return Dim.const(value // divisor)
        if divisor == 1:
            return self
        if divisor < 0:
            return (-self)._floordiv_int(-divisor)
        variable = [(m, c) for m, c in self.terms if m]
        constant = self.as_constant_part()
        if all(c % divisor == 0 for _, c in variable):
            # (d*X + r)//d == X + r//d for every integer X.
            return Dim([(m, c // divisor) for m, c in variable] + [((), constant // divisor)])
        common = math.gcd(divisor, *(c for _, c in self.terms))
        if common > 1:
            reduced = Dim((m, c // common) for m, c in self.terms)
            return Dim.atom(FloorDiv(reduced, Dim.const(divisor // common)))
        return Dim.atom(FloorDiv(self, Dim.const(divisor)))

    def divide_exactly(self, other: "Dim") -> "Dim | None":
        """`self / other` when `other` divides `self` as polynomials (one-term divisors, or
        a constant multiple of `other`); None otherwise."""
        if not other.terms:
            return None
        if len(other.terms) == 1:
            monomial, coefficient = other.terms[0]
            quotient = []
            for m, c in self.terms:
                rest = _remove_factors(m, monomial)
                if rest is None or c % coefficient:
                    return None
                quotient.append((rest, c // coefficient))
            return Dim(quotient)
        if len(self.terms) == len(other.terms) and self.terms:
            (m1, c1), (m2, c2) = self.terms[0], other.terms[0]
            if m1 == m2 and c1 % c2 == 0 and other.scale(c1 // c2) == self:
                return Dim.const(c1 // c2)
        return None

    def mod(self, other: "Dim") -> "Dim | None":
        a, b = self.as_int(), other.as_int()
        if a is not None and b:
            return Dim.const(a % b)
        if b and all(c % b == 0 for _, c in self.terms):
            return Dim()
        return None

    def as_constant_part(self) -> int:
        for m, c in self.terms:
            if m == ():
                return c
        return 0

    def is_too_large(self) -> bool:
        return len(self.terms) > MAX_TERMS or any(len(m) > MAX_DEGREE for m, _ in self.terms)

    # -- substitution and evaluation --------------------------------------------------
    def substitute(self, mapping: Mapping[str, "Dim"]) -> "Dim":
        if not mapping or not (self.symbols() & mapping.keys()):
            return self
        total = Dim()
        for monomial, coefficient in self.terms:
            term = Dim.const(coefficient)
            for atom in monomial:
                term = term * atom.substitute(mapping)
            total = total + term
        return total

    def evaluate(self, values: Mapping[str, int]) -> int | None:
        """The integer this size has when every symbol has the given value, or None."""
        result = self.substitute({name: Dim.const(v) for name, v in values.items()})
        return result.as_int()

    # -- rendering --------------------------------------------------------------------
    def render(self) -> str:
        if not self.terms:
            return "0"
        text = ""
        for index, (monomial, coefficient) in enumerate(self.terms):
            piece = _render_term(monomial, abs(coefficient))
            if index == 0:
                text = ("-" if coefficient < 0 else "") + piece
            else:
                text += ("-" if coefficient < 0 else "+") + piece
        return text

    def to_json(self) -> int | str:
        value = self.as_int()
        return value if value is not None else self.render()


DimLike = Union[Dim, int]


def _remember(memo: dict, key: tuple, result: tuple) -> None:
    if len(memo) >= MAX_MEMO:
        memo.clear()
    memo[key] = result


def as_dim(value: DimLike) -> Dim:
    return value if isinstance(value, Dim) else Dim.const(value)


def product(dims: Iterable[Dim]) -> Dim:
    total = Dim.const(1)
    for dim in dims:
        total = total * dim
    return total


def known_sum(counts: Iterable[Dim | None]) -> Dim | None:
    """The sum of the counts; None as soon as one is unknown (parameter counts)."""
    total = Dim()
    for count in counts:
        if count is None:
            return None
        total = total + count
    return total


def assuming_divisible(dim: Dim) -> Dim:
    """`heads * (C//heads)` as `C`: what code that spells a size that way assumes (the
    division is exact).  For comparing sizes a program writes, never for computing one."""
    changed = True
    while changed:
        changed = False
        for monomial, coefficient in dim.terms:
            for atom in monomial:
                if not isinstance(atom, FloorDiv) or len(atom.denominator.terms) != 1:
                    continue
                factors, divisor = atom.denominator.terms[0]
                rest = list(monomial)
                rest.remove(atom)
                remaining = _remove_factors(tuple(rest), factors)
                if remaining is None or coefficient % divisor:
                    continue
                others = Dim([(m, c) for m, c in dim.terms if m != monomial])
                dim = others + Dim([(remaining, coefficient // divisor)]) * atom.numerator
                changed = True
                break
            if changed:
                break
    return dim


def _proportional(larger: Dim, smaller: Dim) -> bool:
    """`larger` is a constant multiple (2 or more) of `smaller`, a sum of products of symbols with
    positive coefficients (so positive itself: `hidden`, `n_head*head_dim`, `d+1`)."""
    if not smaller.terms or any(c <= 0 or not all(isinstance(atom, Symbol) for atom in m) for m, c in smaller.terms):
        return False
    ratio = larger.divide_exactly(smaller)
    value = ratio.as_int() if ratio is not None else None
    return value is not None and value >= 2


def _power(base: Dim, exponent: int | None) -> Dim | None:
    if exponent is None or exponent < 0:
        return None
    value = base.as_int()
    if value is not None:
        return Dim.const(value ** exponent) if exponent <= 64 else None
    if exponent > MAX_DEGREE:
        return None
    result = Dim.const(1)
    for _ in range(exponent):
        result = result * base
    return result


def _term_order(term: tuple[Monomial, int]):
    monomial, coefficient = term
    # Highest degree first, the constant last: `3*C*C+2*C+1`.
    return (monomial == (), -len(monomial), [a.key for a in monomial], -coefficient)


def _render_term(monomial: Monomial, coefficient: int) -> str:
    if not monomial:
        return str(coefficient)
    alone = coefficient == 1 and len(monomial) == 1
    factors = [atom.render(alone) for atom in monomial]
    if coefficient != 1:
        factors.insert(0, str(coefficient))
    return "*".join(factors)


def _remove_factors(monomial: Monomial, factors: Monomial) -> Monomial | None:
    remaining = list(monomial)
    for factor in factors:
        if factor not in remaining:
            return None
        remaining.remove(factor)
    return tuple(remaining)


def _cancel_common(numerator: Dim, denominator: Dim) -> tuple[Dim, Dim]:
    """Divide both by their common atoms and the gcd of their coefficients (sizes are positive)."""
    every = numerator.terms + denominator.terms
    common_atoms = list(every[0][0])
    for monomial, _ in every[1:]:
        common_atoms = [a for a in common_atoms if a in monomial]
        kept: list[Atom] = []
        pool = list(monomial)
        for atom in common_atoms:
            if atom in pool:
                pool.remove(atom)
                kept.append(atom)
        common_atoms = kept
    common_coefficient = math.gcd(*(c for _, c in every))
    if not common_atoms and common_coefficient in (0, 1):
        return numerator, denominator

    def reduce(dim: Dim) -> Dim:
        return Dim((_remove_factors(m, tuple(common_atoms)), c // common_coefficient) for m, c in dim.terms)

    return reduce(numerator), reduce(denominator)


# -- parsing ------------------------------------------------------------------------------
def parse_dim(text: str, slash_is_floordiv: bool = True) -> Dim | None:
    """A size written as text (`3*n_embd`, `(H-3)//2+1`, `H/2` in comments), or None."""
    text = text.strip()
    if not text:
        return None
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    return dim_of_expression(node, slash_is_floordiv)


def dim_of_expression(node: ast.AST, slash_is_floordiv: bool = False) -> Dim | None:
    """The size an expression of names and integers spells (names become symbols)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return Dim.const(node.value)
    if isinstance(node, ast.Name):
        return Dim.symbol(node.id)
    if isinstance(node, ast.Attribute):
        return Dim.symbol(node.attr)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = dim_of_expression(node.operand, slash_is_floordiv)
        return -inner if inner is not None else None
    if isinstance(node, ast.BinOp):
        left = dim_of_expression(node.left, slash_is_floordiv)
        right = dim_of_expression(node.right, slash_is_floordiv)
        if left is None or right is None:
            return None
        return binary(node.op, left, right, slash_is_floordiv)
    return None


def binary(op: ast.operator, left: Dim, right: Dim, slash_is_floordiv: bool = False) -> Dim | None:
    """`left op right` for the integer operators sizes use; None when not exact or not known."""
    if isinstance(op, ast.Add):
        result = left + right
    elif isinstance(op, ast.Sub):
        result = left - right
    elif isinstance(op, ast.Mult):
        result = left * right
    elif isinstance(op, ast.FloorDiv) or (slash_is_floordiv and isinstance(op, ast.Div)):
        result = left.floordiv(right)
    elif isinstance(op, ast.Mod):
        result = left.mod(right)
    elif isinstance(op, ast.Pow):
        result = _power(left, right.as_int())
    else:
        return None
    if result is None or result.is_too_large():
        return None
    return result

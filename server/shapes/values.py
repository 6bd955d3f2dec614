"""Abstract values: what the shape interpreter knows about each expression.

Immutable values (tensors, ints, tuples, layers) compare by content, so they can key
the memo of function interpretations.  Mutable ones (lists, dicts, instances of the
file's own classes) compare by identity, as Python objects do.

`UNKNOWN` is the top of the lattice: nothing is known.  `join` is the least upper
bound used where control flow merges; it never invents information.
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any, Callable, Iterator

from torch_lsp.shapes.dims import Dim

if TYPE_CHECKING:
    from torch_lsp.shapes.layers import LayerKind


class Value:
    """Base of every abstract value."""

    __slots__ = ()

    @property
    def key(self) -> Any:
        """What identifies the value in memo keys."""
        return self


class _Unknown(Value):
    __slots__ = ()

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = _Unknown()


class _NoneValue(Value):
    __slots__ = ()

    def __repr__(self) -> str:
        return "None"


NONE = _NoneValue()


class Origin:
    """Where a shape came from, for hover text and messages.

    `text` may be given as a function, or as a tuple `(function, *arguments)` (cheaper to
    make than a closure): most origins are never shown, so their text (source snippets,
    layer descriptions) is only built when asked for."""

    __slots__ = ("_text", "line", "verb", "file")

    def __init__(self, text: "str | Callable[[], str]", line: int, verb: str = "from", file: str | None = None):
        self._text = text
        self.line = line
        self.verb = verb  # "required by" for what a parameter's uses require
        self.file = file  # the file's name when it is not the file being analysed

    @property
    def text(self) -> str:
        text = self._text
        if text.__class__ is not str:
            if text.__class__ is tuple:
                self._text = text = text[0](*text[1:])
            else:
                self._text = text = text()
        return text

    def describe(self) -> str:
        where = f"{self.file}, line {self.line}" if self.file else f"line {self.line}"
        return f"{self.verb} {self.text} ({where})"

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, Origin) and self.line == other.line and self.verb == other.verb
                                 and self.text == other.text)

    def __hash__(self) -> int:
        return hash((self.line, self.verb))

    def __repr__(self) -> str:
        return f"Origin({self.text!r}, {self.line})"


class Tensor(Value):
    """A tensor: its trailing `dims` (None = size unknown), after an unknown number of
    leading dims when `variadic` (`[*, 128]`).  Immutable; equal by dims, variadic and
    dtype (the origin and the claim do not count)."""

    __slots__ = ("dims", "variadic", "dtype", "origin", "claimed", "rank")

    def __init__(self, dims: tuple[Dim | None, ...], variadic: bool = False, dtype: str | None = None,
                 origin: Origin | None = None, claimed: bool = False):
        self.dims = dims
        self.variadic = variadic
        self.dtype = dtype  # "bool" | "long" | "float" | None (not tracked)
        self.origin = origin
        # Some size comes from what a comment, docstring or annotation claims, not from code:
        # good enough to show, never enough to report a mismatch.
        self.claimed = claimed
        self.rank: int | None = None if variadic else len(dims)  # None: unknown

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not Tensor:
            return NotImplemented
        return self.dims == other.dims and self.variadic == other.variadic and self.dtype == other.dtype  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((self.dims, self.variadic, self.dtype))

    def __repr__(self) -> str:
        return (f"Tensor(dims={self.dims!r}, variadic={self.variadic!r}, dtype={self.dtype!r}, "
                f"origin={self.origin!r}, claimed={self.claimed!r})")

    @property
    def has_shape(self) -> bool:
        """Something is known: the rank, or at least one trailing size."""
        return not self.variadic or bool(self.dims)

    @property
    def fully_known(self) -> bool:
        if self.variadic:
            return False
        for dim in self.dims:
            if dim is None:
                return False
        return True

    def with_origin(self, origin: Origin | None) -> "Tensor":
        return Tensor(self.dims, self.variadic, self.dtype, origin, self.claimed)

    def with_dims(self, dims, variadic: bool | None = None, origin: Origin | None = None,
                  dtype: str | None = "keep") -> "Tensor":
        return Tensor(tuple(dims), self.variadic if variadic is None else variadic,
                      self.dtype if dtype == "keep" else dtype, origin or self.origin, self.claimed)

    def as_claimed(self) -> "Tensor":
        return self if self.claimed else Tensor(self.dims, self.variadic, self.dtype, self.origin, True)

    def dim(self, index: int) -> Dim | None:
        """Size of dim `index` (negative counts from the end), None when unknown."""
        if index < 0:
            return self.dims[index] if -index <= len(self.dims) else None
        if self.variadic or index >= len(self.dims):
            return None
        return self.dims[index]

    def render(self) -> str:
        parts = (["*"] if self.variadic else []) + [render_dim(d) for d in self.dims]
        return "[" + ", ".join(parts) + "]"

    def to_json(self) -> list:
        return (["*"] if self.variadic else []) + [("?" if d is None else d.to_json()) for d in self.dims]


def render_dim(dim: Dim | None) -> str:
    return "?" if dim is None else dim.render()


UNKNOWN_TENSOR = Tensor((), variadic=True)


def scalar_tensor(origin: Origin | None = None, dtype: str | None = None) -> Tensor:
    return Tensor((), False, dtype, origin)


class _Simple(Value):
    """An immutable value of one field (`_field`): equal when of the same class with an
    equal field, as a frozen dataclass would be."""

    __slots__ = ()
    _field = ""

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return getattr(self, self._field) == getattr(other, self._field)

    def __hash__(self) -> int:
        return hash((getattr(self, self._field),))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._field}={getattr(self, self._field)!r})"


class Int(_Simple):
    """A Python int: a known or symbolic size, or None when any int is possible."""

    __slots__ = ("dim",)
    _field = "dim"

    def __init__(self, dim: Dim | None = None):
        self.dim = dim

    def __eq__(self, other: object) -> bool:  # the hot case, without `getattr`
        if other.__class__ is not Int:
            return NotImplemented
        return self.dim == other.dim  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((self.dim,))


class Num(Value):
    """A Python float (or a number of unknown kind): a scalar that broadcasts."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return True if other.__class__ is Num else NotImplemented

    def __hash__(self) -> int:
        return hash(())

    def __repr__(self) -> str:
        return "Num()"


NUM = Num()


class Bool(_Simple):
    __slots__ = ("value",)
    _field = "value"

    def __init__(self, value: bool | None = None):
        self.value = value


class Str(_Simple):
    __slots__ = ("value",)
    _field = "value"

    def __init__(self, value: str):
        self.value = value

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not Str:
            return NotImplemented
        return self.value == other.value  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((self.value,))


class TupleValue(Value):
    """A tuple (or `torch.Size`) whose items are all known."""

    __slots__ = ("items", "names")

    def __init__(self, items: tuple[Value, ...], names: tuple[str, ...] = ()):
        self.items = items
        self.names = names  # field names of a named tuple (`values`, `indices`)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not TupleValue:
            return NotImplemented
        return self.items == other.items and self.names == other.names  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((self.items, self.names))

    def __repr__(self) -> str:
        return f"TupleValue(items={self.items!r}, names={self.names!r})"

    @property
    def key(self) -> Any:
        return ("tuple", tuple(item.key for item in self.items))

    def field(self, name: str) -> "Value | None":
        return self.items[self.names.index(name)] if name in self.names else None


class SizeOf(Value):
    """`x.shape` / `x.size()` of a tensor whose rank may be unknown; `source` is the value
    `x` was bound to, so that unpacking (`B, T, C = x.shape`) can refine it."""

    __slots__ = ("tensor", "source")

    def __init__(self, tensor: Tensor, source: Value):
        self.tensor = tensor
        self.source = source

    def __repr__(self) -> str:
        return f"SizeOf(tensor={self.tensor!r}, source={self.source!r})"

    @property
    def key(self) -> Any:
        return ("size", self.tensor)

    def as_tuple(self) -> "TupleValue | None":
        if self.tensor.rank is None:
            return None
        return TupleValue(tuple(Int(d) for d in self.tensor.dims))


class Opaque(Value):
    """A value nothing is known about except its name (a parameter, `config.n_embd`):
    used as a size it is the symbol `dim`; used as a tensor it has no known shape."""

    __slots__ = ("name", "dim")

    def __init__(self, name: str, dim: Dim | None = None):
        self.name = name
        self.dim = dim

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not Opaque:
            return NotImplemented
        return self.name == other.name and self.dim == other.dim  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((self.name, self.dim))

    def __repr__(self) -> str:
        return f"Opaque(name={self.name!r}, dim={self.dim!r})"

    @property
    def key(self) -> Any:
        return ("opaque", self.name)


class ListValue(Value):
    """A list (also `nn.ModuleList`): its items when every append is known (`exact`),
    otherwise one `element` that stands for all of them."""

    __slots__ = ("items", "exact", "kind", "element")

    def __init__(self, items: list[Value], exact: bool = True, kind: str = "list", element: Value | None = None):
        self.items = list(items)
        self.exact = exact
        self.kind = kind  # "list" | "ModuleList" | "ParameterList"
        self.element = element if element is not None else join_all(self.items)

    def append(self, value: Value, exact: bool) -> None:
        self.items.append(value)
        self.element = value if len(self.items) == 1 and self.exact else join(self.element, value)
        self.exact = self.exact and exact

    def mark_inexact(self) -> None:
        self.exact = False

    def copy(self) -> "ListValue":
        return ListValue(self.items, self.exact, self.kind, self.element)

    @property
    def key(self) -> Any:
        return ("list", id(self))


class DictValue(Value):
    """A dict with string keys (also `nn.ModuleDict`)."""

    __slots__ = ("items", "exact", "kind")

    def __init__(self, items: dict[str, Value], exact: bool = True, kind: str = "dict"):
        self.items = dict(items)
        self.exact = exact
        self.kind = kind

    @property
    def key(self) -> Any:
        return ("dict", id(self))


class Layer(Value):
    """A `torch.nn` layer with the constructor arguments that decide its shapes."""

    __slots__ = ("kind", "params", "children", "child_names")

    def __init__(self, kind: "LayerKind", params: tuple[tuple[str, Any], ...], children: tuple[Value, ...] = (),
                 child_names: tuple[str, ...] = ()):
        self.kind = kind
        self.params = params
        self.children = children  # Sequential, TransformerEncoder
        self.child_names = child_names

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not Layer:
            return NotImplemented
        return (self.kind == other.kind and self.params == other.params  # type: ignore[attr-defined]
                and self.children == other.children and self.child_names == other.child_names)  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((self.kind, self.params, self.children, self.child_names))

    def __repr__(self) -> str:
        return (f"Layer(kind={self.kind!r}, params={self.params!r}, children={self.children!r}, "
                f"child_names={self.child_names!r})")

    def get(self, name: str, default: Any = None) -> Any:
        for key, value in self.params:
            if key == name:
                return value
        return default

    @property
    def key(self) -> Any:
        return ("layer", self.kind.name, self.params, tuple(c.key for c in self.children))


class Instance(Value):
    """An object of one of the analysed file's classes (a model, a block, a config)."""

    __slots__ = ("cls", "attrs", "label", "standalone", "parameters", "tied", "changes")

    def __init__(self, cls: "ClassRef", label: str, standalone: bool = False):
        self.cls = cls
        self.attrs: dict[str, Value] = {}
        self.label = label  # "GPT(config)" for messages
        self.standalone = standalone  # built from opaque arguments (not a concrete call)
        self.parameters: set[str] = set()  # attributes assigned from `nn.Parameter(...)`
        # Sizes of submodules' parameters replaced by another module's (weight tying): counted once.
        self.tied: list[Dim | None] = []
        # How often construction changed an attribute: a builder method called twice with the
        # same arguments (`self._make_layer(3, 2)`) may build different layers.
        self.changes = 0

    @property
    def key(self) -> Any:
        return ("instance", id(self))

    def __repr__(self) -> str:
        return f"Instance({self.label})"


class ClassRef(Value):
    """A class defined in an analysed file."""

    __slots__ = ("node", "scope")

    def __init__(self, node: ast.ClassDef, scope: Any):
        self.node = node
        self.scope = scope  # the ModuleScope it was defined in

    def __repr__(self) -> str:
        return f"ClassRef(node={self.node!r}, scope={self.scope!r})"

    @property
    def name(self) -> str:
        return self.node.name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ClassRef) and other.node is self.node

    def __hash__(self) -> int:
        return id(self.node)


class FunctionRef(Value):
    __slots__ = ("node", "scope", "bound_self", "owner", "closure")

    def __init__(self, node: ast.AST, scope: Any, bound_self: Value | None = None, owner: ClassRef | None = None,
                 closure: Any = None):
        self.node = node  # FunctionDef / AsyncFunctionDef / Lambda
        self.scope = scope
        self.bound_self = bound_self
        self.owner = owner
        self.closure = closure  # the environment a lambda was created in

    def __repr__(self) -> str:
        return (f"FunctionRef(node={self.node!r}, scope={self.scope!r}, bound_self={self.bound_self!r}, "
                f"owner={self.owner!r}, closure={self.closure!r})")

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, FunctionRef) and other.node is self.node
                and _same(other.bound_self, self.bound_self))

    def __hash__(self) -> int:
        return id(self.node)

    @property
    def key(self) -> Any:
        return ("function", id(self.node), self.bound_self.key if self.bound_self is not None else None)


class TorchRef(_Simple):
    """A torch function or class used as a value (`act = nn.GELU`, `fn = F.relu`)."""

    __slots__ = ("qualname",)
    _field = "qualname"

    def __init__(self, qualname: str):
        self.qualname = qualname


class BoundTorchMethod(Value):
    """`x.view` before it is called, or a layer's method (`self.lstm.flatten_parameters`)."""

    __slots__ = ("receiver", "name")

    def __init__(self, receiver: Value, name: str):
        self.receiver = receiver
        self.name = name

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not BoundTorchMethod:
            return NotImplemented
        return self.receiver == other.receiver and self.name == other.name  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((self.receiver, self.name))

    def __repr__(self) -> str:
        return f"BoundTorchMethod(receiver={self.receiver!r}, name={self.name!r})"

    @property
    def key(self) -> Any:
        return ("method", self.receiver.key, self.name)


def _same(a: Value | None, b: Value | None) -> bool:
    if a is None or b is None:
        return a is b
    return a.key == b.key


# -- lattice --------------------------------------------------------------------------
def same(a: Value, b: Value) -> bool:
    return a is b or a.key == b.key


def join(a: Value, b: Value) -> Value:
    """What is known of a value that is `a` on one path and `b` on another."""
    if a is b:
        return a
    kind = a.__class__
    if kind is Tensor and b.__class__ is Tensor:
        return join_tensors(a, b)
    if kind is Int and b.__class__ is Int:
        return a if a.dim == b.dim else Int(None)
    if isinstance(a, (Num, Int)) and isinstance(b, (Num, Int)):
        return NUM
    if isinstance(a, TupleValue) and isinstance(b, TupleValue) and len(a.items) == len(b.items):
        return TupleValue(tuple(join(x, y) for x, y in zip(a.items, b.items)))
    if isinstance(a, Bool) and isinstance(b, Bool):
        return a if a.value == b.value else Bool(None)
    if same(a, b):
        return a
    return UNKNOWN


def join_tensors(a: Tensor, b: Tensor) -> Tensor:
    origin = a.origin if a.origin is b.origin or a.origin == b.origin else None
    dtype = a.dtype if a.dtype == b.dtype else None
    if a.claimed or b.claimed:
        joined = join_tensors(Tensor(a.dims, a.variadic, a.dtype, a.origin), Tensor(b.dims, b.variadic, b.dtype, b.origin))
        return joined.as_claimed()
    if a.variadic or b.variadic or len(a.dims) != len(b.dims):
        # Only the common trailing sizes survive, after any number of leading dims.
        common = []
        for x, y in zip(reversed(a.dims), reversed(b.dims)):
            common.append(x if x == y else None)
        while common and common[-1] is None:
            common.pop()
        return Tensor(tuple(reversed(common)), True, dtype, origin)
    dims = tuple([x if x is y or x == y else None for x, y in zip(a.dims, b.dims)])
    return Tensor(dims, False, dtype, origin)


def join_all(values) -> Value:
    result: Value | None = None
    for value in values:
        result = value if result is None else join(result, value)
    return result if result is not None else UNKNOWN


def information(value: Value) -> int:
    """How much a value tells about shapes (for choosing between contexts)."""
    if isinstance(value, Tensor):
        return (0 if value.variadic else 2) + 2 * sum(d is not None for d in value.dims) + sum(
            1 for d in value.dims if d is not None and d.is_int)
    if isinstance(value, TupleValue):
        return sum(information(v) for v in value.items)
    if isinstance(value, Int):
        return 0 if value.dim is None else (2 if value.dim.is_int else 1)
    if isinstance(value, Layer):
        return sum(1 for _, p in value.params if isinstance(p, Dim) and p.is_int)
    if isinstance(value, Instance):
        return 0 if value.standalone else 1
    return 0


def tensors_in(value: Value) -> Iterator[Tensor]:
    if isinstance(value, Tensor):
        yield value
    elif isinstance(value, TupleValue):
        for item in value.items:
            yield from tensors_in(item)


def has_claims(values) -> bool:
    """Whether any tensor among `values` (tuples and lists looked into: `torch.cat([a, b])`)
    has claimed sizes."""
    for value in values:
        kind = value.__class__
        if kind is Tensor:
            if value.claimed:
                return True
        elif kind is TupleValue and has_claims(value.items):
            return True
        elif kind is ListValue and (has_claims(value.items) or value.element is not None
                                    and has_claims((value.element,))):
            return True
    return False


def as_claimed(value: Value) -> Value:
    """The value with its tensors marked as claimed (results of operations on claims)."""
    if isinstance(value, Tensor):
        return value.as_claimed()
    if isinstance(value, TupleValue):
        return TupleValue(tuple(as_claimed(v) for v in value.items), value.names)
    return value


def forget_sizes(value: Value, symbols: set[str]) -> Value:
    """`value` with every size built from one of these symbols unknown (a tensor's dims, an
    int, the items of a tuple); other values as they are."""
    def forgotten(dim: Dim | None) -> bool:
        return dim is not None and not dim.symbols().isdisjoint(symbols)

    if value.__class__ is Tensor:
        dims = value.dims  # type: ignore[attr-defined]
        return value.with_dims([None if forgotten(d) else d for d in dims]) if any(map(forgotten, dims)) else value
    if value.__class__ is Int:
        return Int(None) if forgotten(value.dim) else value  # type: ignore[attr-defined]
    if value.__class__ is Opaque:
        return Opaque(value.name, None) if forgotten(value.dim) else value  # type: ignore[attr-defined]
    if value.__class__ is TupleValue:
        items = tuple(forget_sizes(item, symbols) for item in value.items)  # type: ignore[attr-defined]
        return TupleValue(items, value.names)  # type: ignore[attr-defined]
    return value

"""Evaluating expressions over abstract values: names, attributes, subscripts,
operators, literals, comprehensions (a part of `Frame`)."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from torch_lsp import memos
from torch_lsp.shapes import functions as fn
from torch_lsp.shapes import layers, ops
from torch_lsp.shapes.dims import Dim, binary
from torch_lsp.shapes.limits import MAX_UNROLL
from torch_lsp.shapes.layers.requirements import float_indices, mixed_product
from torch_lsp.shapes.ops import ShapeError, describe
from torch_lsp.shapes.pyvalues import ELLIPSIS_VALUE, RangeValue, SliceValue, SuperValue
from torch_lsp.shapes.loaders import LoaderValue
from torch_lsp.shapes.syntax import is_property, positional_params, statements_of
from torch_lsp.shapes.values import (
    NONE, NUM, UNKNOWN, UNKNOWN_TENSOR, Bool, BoundTorchMethod, ClassRef, DictValue, FunctionRef, Instance, Int,
    Layer, ListValue, Num, Opaque, SizeOf, Str, Tensor, TorchRef, TupleValue, Value, as_claimed, has_claims, join,
    join_all,
)
from torch_lsp.syntax_nodes import walk_nodes

if TYPE_CHECKING:
    from torch_lsp.shapes.frame import Frame
    from torch_lsp.shapes.interpret import Engine, ModuleScope


BUILTINS = {
    "len", "range", "zip", "enumerate", "reversed", "int", "float", "bool", "str", "max", "min", "sum", "abs",
    "list", "tuple", "dict", "isinstance", "getattr", "setattr", "hasattr", "print", "round", "sorted", "super",
    "type", "iter", "next", "map", "any", "all", "divmod", "pow", "id", "repr", "format", "open", "callable",
}


class ExpressionRules:
    """Expression evaluation; mixed into `Frame`, whose state it uses."""

    engine: "Engine"
    scope: "ModuleScope"
    expression_handlers: dict  # {ast node type: method}, filled in by `Frame`

    # -- expressions ---------------------------------------------------------------------
    def eval(self, node: ast.AST | None, env: dict[str, Value]) -> Value:
        if node.__class__ is ast.Name:  # names are half of what is evaluated: handled here, without a call
            value = env.get(node.id)
            if value is None:
                value = self.lookup(node.id, env)
            if self.recording:
                values = self.values
                old = values.get(node)
                values[node] = value if old is None or old is value else join(old, value)
            return value
        if node.__class__ is ast.Constant:  # constants too: most are cached values
            value = node.value
            kind = value.__class__
            if kind is int or kind is str:
                known = _CONSTANT_VALUES.get((kind, value))
                if known is not None:
                    return known
            return _new_constant(value)
        handler = self.expression_handlers.get(node.__class__)
        if handler is None:
            return NONE if node is None else UNKNOWN
        return handler(self, node, env)

    def lookup(self, name: str, env: dict[str, Value]) -> Value:
        value = env.get(name)
        if value is not None:
            return value
        if self.closure is not None and name in self.closure:
            return self.closure[name]
        if self.nested is None:
            self.nested = _is_nested(self)
        if self.nested and name in _enclosing_locals(self):
            return UNKNOWN
        value = self.scope.globals.get(name)
        if value is not None:
            if self.standalone and name in self.scope.rebound_globals and not isinstance(value, (FunctionRef, ClassRef)):
                return UNKNOWN  # no call site: which of the module's bindings it reads is unknown
            return value
        qualname = self.scope.analysis.imports.get(name)
        if qualname is not None:
            imported = self.scope.imported.get(name)
            if imported is None:
                imported = self.engine.foreign_value(qualname) or TorchRef(qualname)
                self.scope.imported[name] = imported
            return imported
        if name in BUILTINS:
            return TorchRef(f"builtins.{name}")
        return UNKNOWN

    def _attribute(self, node: ast.Attribute, env) -> Value:
        owner = node.value
        if owner.__class__ is ast.Name and owner.id == self.self_name and self.self_name is not None:
            value = env.get(f"{self.self_name}.{node.attr}")
            if value is None:
                value = self.attribute_of(self.eval(owner, env), node.attr, node)
        else:
            value = self.attribute_of(self.eval(owner, env), node.attr, node)
        if self.recording:
            values = self.values
            old = values.get(node)
            values[node] = value if old is None or old is value else join(old, value)
        return value

    def attribute_of(self, owner: Value, name: str, node: ast.AST | None = None) -> Value:
        kind = owner.__class__
        if kind is TorchRef:
            return TorchRef(f"{owner.qualname}.{name}")
        if kind is Tensor:
            return self._tensor_attribute(owner, name, node)
        if kind is Instance:
            return self._instance_attribute(owner, name)
        if kind is Layer:
            value = layers.layer_attribute(owner, name)
            if value is UNKNOWN and name in owner.child_names:
                return owner.children[owner.child_names.index(name)]
            return value if value is not UNKNOWN else BoundTorchMethod(owner, name)
        if owner is UNKNOWN:  # the most common of the kinds below, none of which it is
            return UNKNOWN
        if isinstance(owner, Opaque):
            if name == "shape":
                return SizeOf(UNKNOWN_TENSOR, owner)  # only tensors and arrays have one
            return Opaque(f"{owner.name}.{name}", Dim.symbol(name))
        if isinstance(owner, ClassRef):
            value = self.engine.lookup_class_attribute(owner, name)
            return value if value is not None else UNKNOWN
        if isinstance(owner, DictValue) and owner.kind == "ModuleDict" and name in owner.items:
            return owner.items[name]
        if isinstance(owner, SizeOf) or isinstance(owner, (ListValue, DictValue, Str, TupleValue)):
            if isinstance(owner, TupleValue) and owner.field(name) is not None:
                return owner.field(name)  # type: ignore[return-value]
            return BoundTorchMethod(owner, name)
        if isinstance(owner, SuperValue):
            method = self.engine.lookup_method(owner.base, name) if owner.base is not None else None
            if method is not None:
                return FunctionRef(method.node, method.scope, owner.instance, method.owner)
            return BoundTorchMethod(owner, name)
        return UNKNOWN

    def _tensor_attribute(self, tensor: Tensor, name: str, node) -> Value:
        if name == "shape":
            return SizeOf(tensor, tensor)
        if name in ("data", "grad", "real", "imag"):
            return tensor
        if name == "ndim":
            return Int(Dim.const(tensor.rank)) if tensor.rank is not None else Int(None)
        if name == "T":
            if tensor.rank is None:
                return UNKNOWN
            return Tensor(tuple(reversed(tensor.dims)), False, tensor.dtype, tensor.origin)
        if name in ("mT", "mH"):
            return ops.transpose(tensor, -2, -1, tensor.origin) if len(tensor.dims) >= 2 else UNKNOWN
        if name in ("dtype", "device", "is_cuda", "requires_grad", "grad_fn", "layout", "is_leaf"):
            return UNKNOWN
        return BoundTorchMethod(tensor, name)

    def _instance_attribute(self, instance: Instance, name: str) -> Value:
        ref = instance.cls
        if name in instance.attrs and name not in self.engine.volatile_attributes(ref):
            return instance.attrs[name]
        if name in instance.attrs:
            return UNKNOWN
        method = self.engine.lookup_method(ref, name)
        if method is not None:
            if is_property(method.node):
                frame = self.engine.call_function(FunctionRef(method.node, method.scope, instance, method.owner),
                                                  [], {}, self)
                return frame.result if frame is not None else UNKNOWN
            return FunctionRef(method.node, method.scope, instance, method.owner)
        value = self.engine.lookup_class_attribute(ref, name)
        if value is not None and not isinstance(value, FunctionRef):
            # A class-level default (`anchors = torch.empty(0)`) that a method replaces is unknown.
            return UNKNOWN if name in self.engine.volatile_attributes(ref) else value
        return BoundTorchMethod(instance, name)

    def _subscript(self, node: ast.Subscript, env) -> Value:
        container = self.eval(node.value, env)
        if isinstance(container, Tensor):
            value = self._index_tensor(container, node, env)
        else:
            key = self.eval(node.slice, env) if not isinstance(node.slice, ast.Slice) else self._slice_value(node.slice, env)
            value = self.item_of(container, key, node)
        self.record(node, value)
        return value

    def _slice_value(self, node: ast.Slice, env) -> Value:
        bounds = [self.eval(part, env) if part is not None else NONE for part in (node.lower, node.upper, node.step)]
        return SliceValue(*bounds)

    def item_of(self, container: Value, key: Value, node: ast.AST) -> Value:
        if isinstance(container, SizeOf):
            if isinstance(key, SliceValue):
                as_tuple = container.as_tuple()
                return self.item_of(as_tuple, key, node) if as_tuple is not None else UNKNOWN
            index = fn.int_of(key)
            if index is None:
                return Int(None)
            return Int(container.tensor.dim(index))
        if isinstance(container, TupleValue):
            if isinstance(key, SliceValue):
                bounds = key.concrete()
                return TupleValue(tuple(container.items[slice(*bounds)])) if bounds is not None else UNKNOWN
            index = fn.int_of(key)
            if index is not None and -len(container.items) <= index < len(container.items):
                return container.items[index]
            return join_all(container.items) if container.items else UNKNOWN
        if isinstance(container, ListValue):
            if isinstance(key, SliceValue):
                bounds = key.concrete()
                if container.exact and bounds is not None:
                    return ListValue(container.items[slice(*bounds)], kind=container.kind)
                return ListValue([], exact=False, kind=container.kind, element=container.element)
            index = fn.int_of(key)
            if container.exact and index is not None and -len(container.items) <= index < len(container.items):
                return container.items[index]
            return container.element if not container.exact or container.items else UNKNOWN
        if isinstance(container, DictValue):
            if isinstance(key, Str) and key.value in container.items:
                return container.items[key.value]
            return UNKNOWN
        if isinstance(container, Layer) and container.kind.name == "Sequential":
            index = fn.int_of(key)
            if index is not None and -len(container.children) <= index < len(container.children):
                return container.children[index]
            if isinstance(key, SliceValue) and key.concrete() is not None:
                bounds = key.concrete()
                return layers.sequential(list(container.children[slice(*bounds)]))
            return UNKNOWN
        if isinstance(container, Opaque):
            if isinstance(key, Str):
                return Opaque(f"{container.name}.{key.value}", Dim.symbol(key.value) if key.value.isidentifier() else None)
            return UNKNOWN
        return UNKNOWN

    def _index_tensor(self, tensor: Tensor, node: ast.Subscript, env) -> Value:
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        items = []
        for part in parts:
            item = self._index_item(part, env)
            if item is None:
                return UNKNOWN
            items.append(item)
        if has_claims([tensor, *items]):
            saved, self.claimed_inputs = self.claimed_inputs, True
            try:
                return as_claimed(self._indexed(tensor, items, node))
            finally:
                self.claimed_inputs = saved
        return self._indexed(tensor, items, node)

    def _indexed(self, tensor: Tensor, items: list, node: ast.Subscript) -> Value:
        for item in items:
            problem = float_indices(f"`{self.scope.text(node)}`", item)
            if problem is not None:
                self.fail(node, problem, "dtype")
                return UNKNOWN
        try:
            return ops.index(tensor, items, self.scope.source_origin(node))
        except ops.IndexPastSize as error:
            value, _, size = error.args
            self.fail(node, f"`{self.scope.text(node)}` takes index {value} of a dim of size {size} "
                            f"in {describe(tensor)}")
            return UNKNOWN
        except ShapeError:
            return UNKNOWN

    def _index_item(self, part: ast.AST, env):
        if isinstance(part, ast.Slice):
            bounds = []
            known = True
            for bound in (part.lower, part.upper, part.step):
                if bound is None:
                    bounds.append(None)
                    continue
                value = self.eval(bound, env)
                dim = fn.dim_of(value) if isinstance(value, Int) else None
                if dim is None:
                    known = False
                bounds.append(dim)
            return ops.Slice(bounds[0], bounds[1], bounds[2], known)
        if isinstance(part, ast.Constant) and part.value is None:
            return ops.NEWAXIS
        if isinstance(part, ast.Constant) and part.value is Ellipsis:
            return ops.ELLIPSIS
        value = self.eval(part, env)
        if isinstance(value, Int):
            return value.dim if value.dim is not None else ops.SOME_INT
        if value is NONE:
            return ops.NEWAXIS
        if isinstance(value, Tensor):
            return value
        if isinstance(value, Bool):
            return None
        if isinstance(value, ListValue) and value.exact and all(isinstance(v, Int) for v in value.items):
            return Tensor((Dim.const(len(value.items)),), False, "long")
        return None

    def _binop(self, node: ast.BinOp, env) -> Value:
        left = self.eval(node.left, env)
        right = self.eval(node.right, env)
        value = self.binop(node.op, left, right, node)
        if self.recording and value.__class__ is Tensor:  # `scores / scale`: rules ask for its shape
            values = self.values
            old = values.get(node)
            values[node] = value if old is None or old is value else join(old, value)
        return value

    def binop(self, op: ast.operator, left: Value, right: Value, node: ast.AST) -> Value:
        if left.__class__ is Tensor or right.__class__ is Tensor:
            return self._tensor_binop(op, left, right, node)
        if isinstance(left, (Int, Opaque)) and isinstance(right, (Int, Opaque)):
            return _int_binop(op, left, right)
        if isinstance(left, (Int, Num, Opaque, Bool)) and isinstance(right, (Int, Num, Opaque, Bool)):
            if isinstance(left, Opaque) or isinstance(right, Opaque):
                return NUM if isinstance(op, (ast.Div, ast.Pow, ast.Mult, ast.Add, ast.Sub)) else UNKNOWN
            return NUM
        if isinstance(op, ast.Add):
            left_items, right_items = fn.items_of(left), fn.items_of(right)
            if left_items is not None and right_items is not None:
                if isinstance(left, ListValue) and isinstance(right, ListValue):
                    return ListValue(left_items + right_items)
                return TupleValue(tuple(left_items + right_items))
        if isinstance(op, ast.Mult):
            items = fn.items_of(left)
            times = fn.int_of(right)
            if items is not None and times is not None and 0 <= times * len(items) <= 64:
                return ListValue(items * times) if isinstance(left, ListValue) else TupleValue(tuple(items * times))
        return UNKNOWN

    def _tensor_binop(self, op, left: Value, right: Value, node: ast.AST) -> Value:
        if not has_claims((left, right)):
            return self._tensor_operation(op, left, right, node)
        saved, self.claimed_inputs = self.claimed_inputs, True
        try:
            return as_claimed(self._tensor_operation(op, left, right, node))
        finally:
            self.claimed_inputs = saved

    def _tensor_operation(self, op, left: Value, right: Value, node: ast.AST) -> Value:
        a, b = fn.tensor_of(left), fn.tensor_of(right)
        if isinstance(op, ast.MatMult):  # only tensors (and arrays) multiply with `@`
            a = a if a is not None else UNKNOWN_TENSOR
            b = b if b is not None else UNKNOWN_TENSOR
        if a is None or b is None:
            return UNKNOWN
        origin = self.scope.source_origin(node)
        if isinstance(op, ast.MatMult):
            mixed = mixed_product(f"`{self.scope.text(node)}`", a, b) if left.__class__ is right.__class__ is Tensor \
                else None  # a Python number is no matrix: `@` on one raises a TypeError instead
            if mixed is not None:
                self.fail(node, mixed, "dtype")
            try:
                return ops.matmul(a, b, origin)
            except ShapeError as error:
                problem = ("their batch dims cannot broadcast" if str(error) == "batch"
                           else f"the inner sizes {ops.render_inner(a, b)} differ")
                self.fail(node, f"`{self.scope.text(node)}` multiplies {describe(a)} by {describe(b)}: {problem}")
                return UNKNOWN
        try:
            result = ops.broadcast([a, b], origin)
        except ShapeError:
            self.fail(node, ops.broadcast_error([a, b], f"`{self.scope.text(node)}`"))
            return UNKNOWN
        if isinstance(op, (ast.BitAnd, ast.BitOr, ast.BitXor)) and a.dtype == "bool" and b.dtype == "bool":
            return result.with_dims(result.dims, dtype="bool")
        if isinstance(op, ast.Div):
            return result.with_dims(result.dims, dtype="float")
        return result

    def _unaryop(self, node: ast.UnaryOp, env) -> Value:
        value = self.eval(node.operand, env)
        if isinstance(node.op, ast.Not):
            truth = self.truth(value)
            return Bool(None if truth is None else not truth)
        if isinstance(value, Tensor):
            return value
        if isinstance(value, Int) and isinstance(node.op, ast.USub):
            return Int(-value.dim if value.dim is not None else None)
        if isinstance(value, Int) and isinstance(node.op, ast.UAdd):
            return value
        if isinstance(value, Num):
            return NUM
        return UNKNOWN

    def _boolop(self, node: ast.BoolOp, env) -> Value:
        is_and = isinstance(node.op, ast.And)
        results = []
        for part in node.values:
            value = self.eval(part, env)
            truth = self.truth(value)
            if truth is (not is_and):
                results.append(value)
                return join_all(results) if len(results) > 1 else value
            if truth is None:
                results.append(value)
        if not results:
            return Bool(is_and)
        return join_all(results) if len(results) > 1 else results[0]

    def _compare(self, node: ast.Compare, env) -> Value:
        left = self.eval(node.left, env)
        rights = [self.eval(c, env) for c in node.comparators]
        if len(rights) == 1:
            op, right = node.ops[0], rights[0]
            if isinstance(op, (ast.Is, ast.IsNot)):
                same_value = _is_none_check(left, right)
                if same_value is None:
                    return Bool(None)
                return Bool(same_value if isinstance(op, ast.Is) else not same_value)
            if isinstance(left, SizeOf) and isinstance(right, SizeOf) and isinstance(op, (ast.Eq, ast.NotEq)):
                equal = _same_shape(left.tensor, right.tensor)  # `if x.shape == residual.shape:`
                return Bool(None if equal is None else equal == isinstance(op, ast.Eq))
            if isinstance(left, Tensor) or isinstance(right, Tensor):
                result = self._tensor_binop(ast.Add(), left, right, node)
                return result.with_dims(result.dims, dtype="bool") if isinstance(result, Tensor) else UNKNOWN
            if left.__class__ is Opaque or right.__class__ is Opaque or left is UNKNOWN or right is UNKNOWN:
                return UNKNOWN  # `mask > 0` on a parameter may be a tensor of booleans, not one bool
            return Bool(_compare_ints(op, left, right))
        return Bool(None)

    def _ifexp(self, node: ast.IfExp, env) -> Value:
        truth = self.truth(self.eval(node.test, env))
        if truth is True:
            return self.eval(node.body, env)
        if truth is False:
            return self.eval(node.orelse, env)
        return join(self.eval(node.body, env), self.eval(node.orelse, env))

    def _tuple(self, node: ast.Tuple, env) -> Value:
        items = self._items(node.elts, env)
        return TupleValue(tuple(items)) if items is not None else UNKNOWN

    def _list(self, node: ast.List, env) -> Value:
        items = self._items(node.elts, env)
        return ListValue(items) if items is not None else ListValue([], exact=False, element=UNKNOWN)

    def _items(self, nodes: list[ast.AST], env) -> list[Value] | None:
        items: list[Value] = []
        for element in nodes:
            if isinstance(element, ast.Starred):
                spread = fn.items_of(self.eval(element.value, env))
                if spread is None:
                    return None
                items.extend(spread)
            else:
                items.append(self.eval(element, env))
        return items

    def _dict(self, node: ast.Dict, env) -> Value:
        items: dict[str, Value] = {}
        exact = True
        for key, value in zip(node.keys, node.values):
            evaluated = self.eval(value, env)
            if key is not None and isinstance(key, ast.Constant) and isinstance(key.value, str):
                items[key.value] = evaluated
            else:
                exact = False
        return DictValue(items, exact)

    def _comprehension(self, node, env) -> Value:
        scope = dict(env)
        exact = True
        combos: list[dict[str, Value]] = [scope]
        for generator in node.generators:
            iterable = self.eval(generator.iter, combos[0] if len(combos) == 1 else scope)
            items = self.unrolled(iterable) if exact and not generator.ifs else None
            expanded = []
            for combo in combos:
                if items is not None and len(combos) * len(items) <= MAX_UNROLL:
                    for item in items:
                        local = dict(combo)
                        self.assign(generator.target, item, local, node)
                        expanded.append(local)
                else:
                    exact = False
                    local = dict(combo)
                    self.assign(generator.target, self.element_of(iterable), local, node)
                    for condition in generator.ifs:
                        self.eval(condition, local)
                    expanded.append(local)
            combos = expanded[:1] if not exact else expanded
        if isinstance(node, ast.DictComp):
            for local in combos:
                self.eval(node.key, local)
                self.eval(node.value, local)
            return DictValue({}, exact=False)
        values = [self.eval(node.elt, local) for local in combos]
        if exact:
            return ListValue(values)
        return ListValue([], exact=False, element=join_all(values), kind="list")

    def _lambda(self, node: ast.Lambda, env) -> Value:
        made = FunctionRef(node, self.scope, None, None, closure=env)
        self.engine.lambdas.append(made)
        return made

    def _named_expr(self, node: ast.NamedExpr, env) -> Value:
        value = self.eval(node.value, env)
        env[node.target.id] = value
        self.record(node.target, value)
        return value

    def _starred(self, node: ast.Starred, env) -> Value:
        return self.eval(node.value, env)

    def _joined_str(self, node, env) -> Value:
        return UNKNOWN

    # -- truth -------------------------------------------------------------------------
    def truth(self, value: Value) -> bool | None:
        if value is NONE:
            return False
        if isinstance(value, Bool):
            return value.value
        if isinstance(value, Int):
            number = value.dim.as_int() if value.dim is not None else None
            return None if number is None else number != 0
        if isinstance(value, Str):
            return bool(value.value) if value.value != "?" else None
        if isinstance(value, TupleValue):
            return bool(value.items)
        if isinstance(value, ListValue):
            return bool(value.items) if value.exact else None
        if isinstance(value, (ClassRef, FunctionRef)):
            return True
        if isinstance(value, Layer):
            return True if value.kind.name != "Sequential" else bool(value.children)
        return None

    def unrolled(self, iterable: Value) -> list[Value] | None:
        """The items of a short sequence known item by item (a loop over it is unrolled)."""
        items = None
        if isinstance(iterable, TupleValue):
            items = list(iterable.items)
        elif isinstance(iterable, ListValue) and iterable.exact:
            items = list(iterable.items)
        elif isinstance(iterable, Layer) and iterable.kind.name == "Sequential":
            items = list(iterable.children)
        elif isinstance(iterable, DictValue) and iterable.exact:
            items = [Str(k) for k in iterable.items]
        elif isinstance(iterable, SizeOf):
            as_tuple = iterable.as_tuple()
            items = list(as_tuple.items) if as_tuple is not None else None
        elif isinstance(iterable, RangeValue):
            items = iterable.items()
        if items is None or len(items) > MAX_UNROLL:
            return None
        return items

    def element_of(self, iterable: Value) -> Value:
        if isinstance(iterable, (TupleValue,)):
            return join_all(iterable.items)
        if isinstance(iterable, ListValue):
            return iterable.element if not iterable.exact or iterable.items else UNKNOWN
        if isinstance(iterable, Layer) and iterable.kind.name == "Sequential":
            return join_all(iterable.children)
        if isinstance(iterable, RangeValue):
            return Int(None)
        if isinstance(iterable, LoaderValue):
            return iterable.batch
        if isinstance(iterable, Tensor) and iterable.rank is not None and iterable.rank >= 1:
            return Tensor(iterable.dims[1:], False, iterable.dtype, iterable.origin)
        return UNKNOWN


_CONSTANT_VALUES: dict[tuple, Value] = {}  # literal ints and strings, shared (values are immutable)
memos.register(_CONSTANT_VALUES.clear)


def _int_binop(op: ast.operator, left: Value, right: Value) -> Value:
    a = left.dim
    b = right.dim
    if isinstance(op, ast.Div):
        return NUM
    if isinstance(op, ast.Pow) and isinstance(right, Int) and right.dim is not None and (right.dim.as_int() or 0) < 0:
        return NUM
    result = binary(op, a, b) if a is not None and b is not None else None
    if isinstance(left, Opaque) or isinstance(right, Opaque):
        name = left.name if isinstance(left, Opaque) else right.name  # type: ignore[union-attr]
        return Opaque(f"({name} ...)", result)
    return Int(result)


def _compare_ints(op: ast.cmpop, left: Value, right: Value) -> bool | None:
    a, b = fn.int_of(left), fn.int_of(right)
    if a is None or b is None:
        if isinstance(op, (ast.Eq, ast.NotEq)) and isinstance(left, Str) and isinstance(right, Str):
            equal = left.value == right.value
            return equal if isinstance(op, ast.Eq) else not equal
        if isinstance(left, Int) and isinstance(right, Int) and left.dim is not None and right.dim is not None:
            if left.dim == right.dim and isinstance(op, (ast.Eq, ast.LtE, ast.GtE)):
                return True
            if left.dim == right.dim and isinstance(op, (ast.NotEq, ast.Lt, ast.Gt)):
                return False
        return None
    table = {ast.Eq: a == b, ast.NotEq: a != b, ast.Lt: a < b, ast.LtE: a <= b, ast.Gt: a > b, ast.GtE: a >= b}
    return table.get(type(op))


def _same_shape(a: Tensor, b: Tensor) -> bool | None:
    """Whether two tensors' shapes are equal: False when a dim known on both sides (counted
    from the right) surely differs, or both ranks are known and differ; True when both are
    fully known and the same; None otherwise.  A branch guarded by a shape comparison is then
    followed only where it runs, as for a residual that adds its input only on equal shapes."""
    if a.rank is not None and b.rank is not None and a.rank != b.rank:
        return False
    if any(ops.surely_differ(x, y) for x, y in zip(reversed(a.dims), reversed(b.dims))):
        return False
    if a.fully_known and b.fully_known and a.dims == b.dims:
        return True
    return None


def _is_none_check(left: Value, right: Value) -> bool | None:
    """Whether `left is right` when one side is None: True/False, or None when not known."""
    if right is NONE:
        other = left
    elif left is NONE:
        other = right
    else:
        return None
    if other is NONE:
        return True
    if isinstance(other, (Tensor, Int, Num, Str, Layer, Instance, TupleValue, ListValue, DictValue, ClassRef,
                          FunctionRef, Bool)):
        return False
    return None


# Which method evaluates each kind of expression (bound to `Frame` in frame.py).
EXPRESSION_METHODS = {
    ast.Attribute: "_attribute", ast.Call: "_call",  # names and constants: in `eval` itself
    ast.Subscript: "_subscript", ast.BinOp: "_binop", ast.UnaryOp: "_unaryop", ast.BoolOp: "_boolop",
    ast.Compare: "_compare", ast.IfExp: "_ifexp", ast.Tuple: "_tuple", ast.List: "_list",
    ast.Dict: "_dict", ast.ListComp: "_comprehension", ast.GeneratorExp: "_comprehension",
    ast.SetComp: "_comprehension", ast.DictComp: "_comprehension", ast.Lambda: "_lambda",
    ast.NamedExpr: "_named_expr", ast.Starred: "_starred", ast.JoinedStr: "_joined_str",
}


def _new_constant(value: object) -> Value:
    """The value of a constant not in `_CONSTANT_VALUES` yet (ints and strings are cached there)."""
    if isinstance(value, (int, str)) and not isinstance(value, bool) and len(_CONSTANT_VALUES) < 8192:
        made = Int(Dim.const(value)) if isinstance(value, int) else Str(value)
        _CONSTANT_VALUES[(type(value), value)] = made
        return made
    if isinstance(value, bool):
        return Bool(value)
    if isinstance(value, int):
        return Int(Dim.const(value))
    if isinstance(value, float) or isinstance(value, complex):
        return NUM
    if isinstance(value, str):
        return Str(value)
    if value is None:
        return NONE
    if value is Ellipsis:
        return ELLIPSIS_VALUE
    return UNKNOWN


def _is_nested(frame: "Frame") -> bool:
    node = frame.node
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    cache = frame.engine.nested
    cached = cache.get(node)
    if cached is None:
        parent = frame.scope.analysis.parents.get(node)
        while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
            parent = frame.scope.analysis.parents.get(parent)
        cached = parent is not None
        cache[node] = cached
    return cached


def _enclosing_locals(frame: "Frame") -> set[str]:
    """Names bound in the functions enclosing a nested function (its closure candidates)."""
    analysis, node = frame.scope.analysis, frame.node
    cache = frame.engine.enclosing
    cached = cache.get(node)
    if cached is not None:
        return cached
    names: set[str] = set()
    parent = analysis.parents.get(node)
    while parent is not None:
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names |= _function_locals(frame.engine, parent)
        parent = analysis.parents.get(parent)
    cache[node] = names
    return names


def _function_locals(engine: Engine, function: ast.AST) -> set[str]:
    """Parameters and names a function's statements bind (once per function)."""
    cache = engine.function_locals
    found = cache.get(function)
    if found is not None:
        return found
    found = {p.arg for p in positional_params(function) + list(function.args.kwonlyargs)}
    for extra in (function.args.vararg, function.args.kwarg):
        if extra is not None:
            found.add(extra.arg)
    for stmt in statements_of(function):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(stmt.name)
            continue
        targets: list = []
        if isinstance(stmt, ast.Assign):
            targets = stmt.targets
        elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
            targets = [stmt.target]
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            targets = [item.optional_vars for item in stmt.items if item.optional_vars is not None]
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            found.update((alias.asname or alias.name).split(".")[0] for alias in stmt.names)
        elif isinstance(stmt, ast.ExceptHandler) and stmt.name:
            found.add(stmt.name)
        for target in targets:
            found.update(n.id for n in walk_nodes(target) if isinstance(n, ast.Name))
    cache[function] = found
    return found

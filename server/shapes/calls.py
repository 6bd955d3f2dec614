"""Evaluating calls: torch functions and layers, the file's own functions and
classes, methods of modules, lists and dicts, and Python builtins (a part of `Frame`)."""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING

from torch_lsp.shapes import functions as fn
from torch_lsp.shapes import layers, loaders
from torch_lsp.shapes.dims import Dim
from torch_lsp.shapes.pyvalues import RangeValue, SuperValue, UnknownTensorOf
from torch_lsp.shapes.syntax import torch_layer_name
from torch_lsp.shapes.values import (
    NONE, NUM, UNKNOWN, UNKNOWN_TENSOR, Bool, BoundTorchMethod, ClassRef, DictValue, FunctionRef, Instance, Int,
    Layer, ListValue, Num, Opaque, Origin, SizeOf, Str, Tensor, TorchRef, TupleValue, Value, as_claimed, has_claims,
    join, join_all,
)

if TYPE_CHECKING:
    from torch_lsp.shapes.frame import Frame


MODULE_METHODS_RETURNING_SELF = {
    "to", "cuda", "cpu", "float", "half", "double", "bfloat16", "train", "eval", "requires_grad_", "to_empty",
    "apply", "share_memory", "type", "xpu", "zero_grad",
}
# In-place methods that change the shape of the tensor they are called on.
RESHAPING_IN_PLACE = {
    "unsqueeze_", "squeeze_", "transpose_", "t_", "swapdims_", "swapaxes_", "resize_", "resize_as_", "set_",
    "as_strided_",
}
TENSOR_ONLY_METHODS = {
    "view", "reshape", "permute", "transpose", "unsqueeze", "squeeze", "flatten", "contiguous", "size", "dim",
    "masked_fill", "softmax", "log_softmax", "matmul", "expand", "unflatten", "chunk", "unbind", "view_as",
    "expand_as", "float", "long", "bool", "half", "detach", "type_as", "new_zeros", "new_ones", "new_full",
    "new_empty", "numel", "t", "mean", "sum", "norm", "to", "clone", "argmax", "masked_fill_", "gather",
}


@dataclass(eq=False)
class ModuleCall:
    """A submodule called inside a method: for summaries and hover."""

    site: "CallSite | str"  # where it was called; its label is "self.attn", "self.mlp.0"
    module: Value
    output: Value
    frame: "Frame | None"  # the frame of the submodule's forward, for user modules

    @property
    def label(self) -> str:
        return self.site if isinstance(self.site, str) else self.site.label


class CallRules:
    """Call evaluation; mixed into `Frame`, whose state it uses."""

    # -- calls ---------------------------------------------------------------------------
    def _call(self, node: ast.Call, env) -> Value:
        engine = self.engine
        engine.steps += 1
        if engine.steps > engine.step_limit:
            engine.limit_reached()
        func = node.func
        if func.__class__ is ast.Attribute and func.attr in TENSOR_ONLY_METHODS:
            callee = self._callee(func, env)
        else:
            callee = self.eval(func, env)
        args: list[Value] = []
        unknown_star = False
        evaluate = self.eval
        claimed = callee.__class__ is BoundTorchMethod and has_claims((callee.receiver,))
        for arg in node.args:
            if arg.__class__ is ast.Starred:
                spread = fn.items_of(evaluate(arg.value, env))
                if spread is None:
                    unknown_star = True
                else:
                    args.extend(spread)
                    claimed = claimed or has_claims(spread)
            else:
                value = evaluate(arg, env)
                args.append(value)
                kind = value.__class__
                if kind is Tensor and value.claimed or (kind is TupleValue or kind is ListValue) and has_claims((value,)):
                    claimed = True
        kwargs: dict[str, Value] = {}
        for keyword in node.keywords:
            value = evaluate(keyword.value, env)
            if keyword.arg is None:
                unknown_star = True
            else:
                kwargs[keyword.arg] = value
                kind = value.__class__
                if kind is Tensor and value.claimed or (kind is TupleValue or kind is ListValue) and has_claims((value,)):
                    claimed = True
        if unknown_star:
            value = UNKNOWN
        elif not claimed:
            handler = _CALLEE_HANDLERS.get(callee.__class__)  # `_dispatch`, inlined
            value = UNKNOWN if handler is None else handler(self, callee, args, kwargs, CallSite(self, node, env))
        else:
            value = self._dispatch_claimed(callee, args, kwargs, CallSite(self, node, env))
        if self.recording:
            values = self.values
            old = values.get(node)
            values[node] = value if old is None else join(old, value)
        return value

    def _callee(self, func: ast.AST, env) -> Value:
        """What a call calls; a tensor-only method of something unknown treats it as a tensor."""
        if func.__class__ is not ast.Attribute or func.attr not in TENSOR_ONLY_METHODS:
            return self.eval(func, env)
        owner = self.eval(func.value, env)
        if isinstance(owner, Opaque) or owner is UNKNOWN:
            value: Value = BoundTorchMethod(UnknownTensorOf(owner), func.attr)
        else:
            value = self.attribute_of(owner, func.attr, func)
        self.record(func, value)
        return value

    def call(self, callee: Value, args: list[Value], kwargs: dict[str, Value], site: "CallSite") -> Value:
        if not (callee.__class__ is BoundTorchMethod and has_claims((callee.receiver,)) or has_claims(args)
                or kwargs and has_claims(kwargs.values())):
            return self._dispatch(callee, args, kwargs, site)
        return self._dispatch_claimed(callee, args, kwargs, site)

    def _dispatch_claimed(self, callee: Value, args: list[Value], kwargs: dict[str, Value], site: "CallSite") -> Value:
        # Inputs whose sizes only a comment claims: the result is a claim too, and no
        # mismatch is reported from it.
        saved, self.claimed_inputs = self.claimed_inputs, True
        try:
            return as_claimed(self._dispatch(callee, args, kwargs, site))
        finally:
            self.claimed_inputs = saved

    def _dispatch(self, callee: Value, args: list[Value], kwargs: dict[str, Value], site: "CallSite") -> Value:
        """The call's value, by what is called (`_CALLEE_HANDLERS`); unknown for anything else."""
        handler = _CALLEE_HANDLERS.get(callee.__class__)
        return handler(self, callee, args, kwargs, site) if handler is not None else UNKNOWN

    def _call_bound_method(self, callee: BoundTorchMethod, args, kwargs, site: "CallSite") -> Value:
        if callee.receiver.__class__ is UnknownTensorOf:
            if callee.name == "size" and not args and not kwargs:
                return SizeOf(UNKNOWN_TENSOR, callee.receiver.source)
            callee = BoundTorchMethod(UNKNOWN_TENSOR, callee.name)
        return self._call_method(callee, args, kwargs, site)

    def _call_torch_ref(self, callee: TorchRef, args, kwargs, site: "CallSite") -> Value:
        return self._call_torch(callee.qualname, args, kwargs, site)

    def _call_layer(self, callee: Layer, args, kwargs, site: "CallSite") -> Value:
        value = callee.kind.forward(site, callee, args, kwargs)
        site.module_called(callee, value, None)
        return value

    def _call_class(self, callee: ClassRef, args, kwargs, site: "CallSite") -> Value:
        return self.engine.instantiate(callee, args, kwargs, self, site.node)

    def _call_instance(self, callee: Instance, args, kwargs, site: "CallSite") -> Value:
        method = self.engine.lookup_method(callee.cls, "forward") or self.engine.lookup_method(callee.cls, "__call__")
        if method is None:
            return UNKNOWN
        frame = self.engine.call_function(FunctionRef(method.node, method.scope, callee, method.owner), args,
                                          kwargs, self, site.node)
        value = self.engine.result_for_caller(frame, args, kwargs)
        site.module_called(callee, value, frame)
        return value

    def _call_function(self, callee: FunctionRef, args, kwargs, site) -> Value:
        if callee.node.__class__ is ast.Lambda:
            return self._call_lambda(callee, args)
        if callee.bound_self is not None and self.engine.signature(callee.node).is_staticmethod:
            callee = FunctionRef(callee.node, callee.scope, None, callee.owner)
        frame = self.engine.call_function(callee, args, kwargs, self, site.node)
        if callee.bound_self is not None and callee.bound_self is self.self_value and self.self_name is not None:
            self._reread_attributes(site.env)
        return self.engine.result_for_caller(frame, args, kwargs)

    def _reread_attributes(self, env) -> None:
        """After `self._make_layer(...)` during construction: the attributes the builder set
        on the instance (`self.inplanes`) replace what this frame bound before the call."""
        instance = self.self_value
        caller = self.caller[0] if self.caller else None
        constructing = self.is_init or (caller is not None and caller.is_init and caller.self_value is instance)
        if not isinstance(instance, Instance) or not constructing:
            return
        prefix = f"{self.self_name}."
        for key in [k for k in env if k.startswith(prefix) and k.count(".") == 1]:
            current = instance.attrs.get(key[len(prefix):])
            if current is not None:
                env[key] = current

    def _call_lambda(self, callee: FunctionRef, args: list[Value]) -> Value:
        node = callee.node
        local = dict(callee.closure or {})
        for param, value in zip(node.args.args, args):
            local[param.arg] = value
        frame = type(self)(self.engine, self.scope, self.node, self.self_value, record=False)
        frame.self_name = self.self_name
        return frame.eval(node.body, local)

    def _call_method(self, method: BoundTorchMethod, args, kwargs, site: "CallSite") -> Value:
        receiver, name = method.receiver, method.name
        if isinstance(receiver, Tensor):
            if name in RESHAPING_IN_PLACE:
                # `x.unsqueeze_(0)` changes `x` itself: what was known of it no longer holds.
                self.refine(receiver, Tensor((), True), site.env)
                return UNKNOWN
            rule = fn.METHODS.get(name)
            return rule(fn.Call(site, args, kwargs), receiver) if rule is not None else UNKNOWN
        if isinstance(receiver, (Layer, Instance)):
            if name == "forward" or name == "__call__":
                return self.call(receiver, args, kwargs, site)
            if name in MODULE_METHODS_RETURNING_SELF:
                return receiver
            if name == "register_buffer" and isinstance(receiver, Instance):
                return self._register_buffer(receiver, args, site)
            if name in ("add_module", "register_module") and isinstance(receiver, Instance) and len(args) == 2:
                if isinstance(args[0], Str):
                    site.env[f"{self.self_name}.{args[0].value}"] = args[1]
                    receiver.attrs[args[0].value] = args[1]
                return NONE
            if name == "register_parameter" and isinstance(receiver, Instance) and len(args) == 2:
                return NONE
            if name in LAYER_MUTATORS and isinstance(receiver, Layer) and isinstance(site.node.func, ast.Attribute):
                self.forget(site.node.func.value, site.env)  # `net.append(nn.Linear(4, 2))`
            return UNKNOWN
        if isinstance(receiver, ListValue):
            return self._list_method(receiver, name, args)
        if isinstance(receiver, DictValue):
            return self._dict_method(receiver, name, args, kwargs)
        if isinstance(receiver, SuperValue):
            return NONE if name == "__init__" else UNKNOWN
        return UNKNOWN

    def _register_buffer(self, instance: Instance, args: list[Value], site: "CallSite") -> Value:
        if len(args) >= 2 and isinstance(args[0], Str) and self.self_name is not None:
            site.env[f"{self.self_name}.{args[0].value}"] = args[1]
            if self.is_init:
                instance.attrs[args[0].value] = args[1]
        return NONE

    def _list_method(self, target: ListValue, name: str, args: list[Value]) -> Value:
        exact = self.inexact_depth == 0
        if name == "append" and len(args) == 1:
            target.append(args[0], exact)
            return NONE
        if name == "extend" and len(args) == 1:
            items = fn.items_of(args[0])
            if items is None:
                target.mark_inexact()
                target.element = join(target.element, self.element_of(args[0]))
            else:
                for item in items:
                    target.append(item, exact)
            return NONE
        if name == "insert" and len(args) == 2:
            index = fn.int_of(args[0])
            if exact and target.exact and index is not None:
                target.items.insert(index, args[1])
                target.element = join_all(target.items)
            else:
                target.append(args[1], False)
            return NONE
        if name == "pop":
            if target.exact and exact and target.items:
                index = fn.int_of(args[0]) if args else -1
                if index is not None and -len(target.items) <= index < len(target.items):
                    return target.items.pop(index)
            target.mark_inexact()
            return target.element
        if name in ("copy",):
            return target.copy()
        if name in ("reverse",):
            if target.exact and exact:
                target.items.reverse()
            else:
                target.mark_inexact()
            return NONE
        if name in ("clear",):
            if exact:
                target.items.clear()
            else:
                target.mark_inexact()
            return NONE
        if name in ("index", "count"):
            return Int(None)
        return UNKNOWN

    def _dict_method(self, target: DictValue, name: str, args: list[Value], kwargs: dict[str, Value]) -> Value:
        if name == "items" and target.exact:
            return ListValue([TupleValue((Str(k), v)) for k, v in target.items.items()])
        if name == "values" and target.exact:
            return ListValue(list(target.items.values()))
        if name == "keys" and target.exact:
            return ListValue([Str(k) for k in target.items])
        if name == "get" and args and isinstance(args[0], Str):
            if args[0].value in target.items:
                return target.items[args[0].value]
            return args[1] if len(args) > 1 and target.exact else UNKNOWN
        if name in ("update", "setdefault", "pop", "popitem", "clear"):
            return self._mutate_dict(target, name, args, kwargs)
        return UNKNOWN

    def _mutate_dict(self, target: DictValue, name: str, args: list[Value], kwargs: dict[str, Value]) -> Value:
        """`config.update(hidden=64)`, `config.pop("dropout")`: the keys it changes take their new
        values where the call surely runs; where it may not (a branch, a loop) or what it
        changes is not known, those keys (all of them for an unknown `update`) are forgotten."""
        exact = self.inexact_depth == 0
        if name == "update":
            source = args[0] if args else DictValue({})
            if len(args) > 1 or not isinstance(source, DictValue) or not source.exact:
                target.items.clear()  # any key may change
                target.exact = False
                return NONE
            for key, value in [*source.items.items(), *kwargs.items()]:
                if exact:
                    target.items[key] = value
                else:
                    target.items.pop(key, None)
                    target.exact = False
            return NONE
        if name == "setdefault":
            key = args[0] if args else None
            if not isinstance(key, Str):
                target.items.clear()
                target.exact = False
                return UNKNOWN
            if key.value in target.items:
                return target.items[key.value]
            if exact and target.exact:
                target.items[key.value] = args[1] if len(args) > 1 else NONE
                return target.items[key.value]
            target.exact = False
            return UNKNOWN
        if name == "pop" and args and isinstance(args[0], Str):
            if exact and args[0].value in target.items:
                return target.items.pop(args[0].value)
            target.items.pop(args[0].value, None)
            target.exact = False
            return UNKNOWN
        target.items.clear()  # `clear()`, `popitem()`, a `pop` of an unknown key
        target.exact = exact and name == "clear"
        return UNKNOWN

    # -- torch and builtins --------------------------------------------------------------
    def _call_torch(self, qualname: str, args, kwargs, site: "CallSite") -> Value:
        if qualname.startswith("builtins."):
            return self._call_builtin(qualname[9:], args, kwargs, site)
        rule = fn.FUNCTIONS.get(qualname)
        if rule is not None:
            return rule(fn.Call(site, args, kwargs))
        if qualname in loaders.DATA_LOADERS:
            return loaders.data_loader(self, args, kwargs, site)
        if qualname in loaders.TENSOR_DATASETS:
            return loaders.tensor_dataset(args)
        layer_name = torch_layer_name(qualname)
        if layer_name is not None:
            return self._construct_layer(layer_name, args, kwargs)
        if qualname.startswith("math."):
            return fn.math_result(qualname[5:], args)
        if qualname in ("collections.OrderedDict",):
            return self._ordered_dict(args)
        if qualname == "torch.Size" and args:
            items = fn.items_of(args[0])
            return TupleValue(tuple(items)) if items is not None else UNKNOWN
        if qualname in ("dataclasses.field",):
            return kwargs.get("default", UNKNOWN)
        return UNKNOWN

    def _construct_layer(self, name: str, args: list[Value], kwargs: dict[str, Value]) -> Value:
        if name == "ModuleList":
            items = fn.items_of(args[0]) if args else []
            if items is None:
                source = args[0]
                element = source.element if isinstance(source, ListValue) else UNKNOWN
                return ListValue([], exact=False, kind="ModuleList", element=element)
            return ListValue(items, exact=True, kind="ModuleList")
        if name == "ModuleDict":
            source = args[0] if args else None
            if source is None:
                return DictValue({}, True, "ModuleDict")
            if isinstance(source, DictValue):
                return DictValue(source.items, source.exact, "ModuleDict")
            return DictValue({}, False, "ModuleDict")
        if name in ("ParameterList", "ParameterDict"):
            return UNKNOWN
        if name == "Sequential":
            if len(args) == 1 and isinstance(args[0], DictValue):
                if not args[0].exact:
                    return UNKNOWN
                return layers.sequential(list(args[0].items.values()), list(args[0].items))
            return layers.sequential(list(args))
        kind = layers.KINDS.get(name)
        if kind is None:
            return UNKNOWN
        return layers.build_layer(kind, args, kwargs)

    def _ordered_dict(self, args: list[Value]) -> Value:
        if not args:
            return DictValue({})
        items = fn.items_of(args[0])
        if items is None:
            return DictValue({}, exact=False)
        result: dict[str, Value] = {}
        for pair in items:
            pair_items = fn.items_of(pair)
            if pair_items is None or len(pair_items) != 2 or not isinstance(pair_items[0], Str):
                return DictValue({}, exact=False)
            result[pair_items[0].value] = pair_items[1]
        return DictValue(result)

    def _call_builtin(self, name: str, args: list[Value], kwargs, site) -> Value:
        if name == "len" and len(args) == 1:
            return length_of(args[0])
        if name == "range":
            return RangeValue.of(args)
        if name in ("zip", "enumerate", "reversed", "list", "tuple", "sorted"):
            return sequence_builtin(name, args, self)
        if name == "iter" and len(args) == 1 and isinstance(args[0], loaders.LoaderValue):
            return args[0]
        if name == "next" and len(args) == 1 and isinstance(args[0], loaders.LoaderValue):
            return args[0].batch
        if name == "int" and args:
            return args[0] if isinstance(args[0], Int) else (Int(args[0].dim) if isinstance(args[0], Opaque) else Int(None))
        if name == "float":
            return NUM
        if name in ("max", "min") and len(args) >= 2:
            values = [fn.int_of(a) for a in args]
            if None not in values:
                return Int(Dim.const(max(values) if name == "max" else min(values)))  # type: ignore[type-var]
            if all(isinstance(a, Int) for a in args):
                return Int(None)
            if any(isinstance(a, Num) for a in args) and all(isinstance(a, (Int, Num, Opaque)) for a in args):
                return NUM
            if all(isinstance(a, (Int, Opaque)) for a in args):
                # `min(seq_len, max_positions)` with a parameter: an int or a float, nobody knows
                # (`torch.tensor(...)` of it has no known dtype).
                return Opaque(f"{name}(...)", None)
            return UNKNOWN
        if name == "sum" and args:
            items = fn.items_of(args[0])
            if items is not None and all(isinstance(i, Int) and i.dim is not None for i in items):
                total = Dim()
                for item in items:
                    total = total + item.dim  # type: ignore[operator]
                return Int(total)
            if items is not None and items and all(isinstance(i, Tensor) for i in items):
                return join_all(items) if all(i == items[0] for i in items) else UNKNOWN
            return UNKNOWN
        if name == "abs" and args and isinstance(args[0], Tensor):
            return args[0]
        if name == "round":
            return Int(None) if len(args) == 1 else NUM
        if name == "super":
            return self._super()
        if name == "getattr" and len(args) >= 2 and isinstance(args[1], Str):
            value = self.attribute_of(args[0], args[1].value)
            return value if value is not UNKNOWN or len(args) < 3 else args[2]
        if name == "setattr" and len(args) == 3 and isinstance(args[1], Str) and isinstance(args[0], Instance):
            if args[0] is self.self_value and self.self_name is not None:
                site.env[f"{self.self_name}.{args[1].value}"] = args[2]
                if self.is_init:
                    args[0].attrs[args[1].value] = args[2]
            return NONE
        if name == "dict" and not args:
            return DictValue(dict(kwargs))
        if name == "isinstance" and len(args) == 2:
            return self._isinstance(*args)
        if name in ("isinstance", "hasattr", "callable", "any", "all"):
            return Bool(None)
        if name == "print":
            return NONE
        return UNKNOWN

    def _isinstance(self, value: Value, classes: Value) -> Value:
        """`isinstance(layer, ResnetBlock)` of an object of a class of the files: True when the
        class is one of its ancestors, False when none is and every ancestor is known (a loop
        over a `ModuleList` of mixed blocks then runs each block's own branch only)."""
        options = classes.items if isinstance(classes, TupleValue) else (classes,)
        kind = _builtin_kind(value)
        if kind is not None and options and all(isinstance(c, TorchRef) and c.qualname in _KIND_OF_TYPE for c in options):
            # `isinstance(img, tuple)` of a known tuple or tensor: mmcv's `(h, w)`-or-tensor helpers
            return Bool(any(_KIND_OF_TYPE[c.qualname] == kind for c in options))
        if not isinstance(value, Instance) or not options or not all(isinstance(c, ClassRef) for c in options):
            return Bool(None)
        ancestors, complete = self.engine.ancestry(value.cls)
        if any(option.node is ancestor.node for option in options for ancestor in ancestors):
            return Bool(True)
        return Bool(False) if complete else Bool(None)

    def _super(self) -> Value:
        if not isinstance(self.self_value, Instance) or self.owner is None:
            return SuperValue(self.self_value, None)
        bases = self.engine.bases(self.owner)
        return SuperValue(self.self_value, bases[0] if bases else None)


# Types `isinstance` is decided for, by the kind of value they hold (a `torch.Size` is a tuple).
_KIND_OF_TYPE = {"builtins.tuple": "tuple", "builtins.list": "list", "builtins.dict": "dict", "builtins.str": "str",
                 "torch.Tensor": "tensor"}


def _builtin_kind(value: Value) -> str | None:
    """"tuple", "list", "dict", "str" or "tensor" for a value known to be one, else None."""
    if isinstance(value, Tensor):
        return "tensor"
    if isinstance(value, TupleValue):
        return "tuple"
    if isinstance(value, ListValue):
        return "list"
    if isinstance(value, DictValue):
        return "dict"
    if isinstance(value, Str):
        return "str"
    return None


# What evaluates a call, by the class of what is called.
_CALLEE_HANDLERS = {
    BoundTorchMethod: CallRules._call_bound_method, TorchRef: CallRules._call_torch_ref, Layer: CallRules._call_layer,
    ClassRef: CallRules._call_class, FunctionRef: CallRules._call_function, Instance: CallRules._call_instance,
}


# ---------------------------------------------------------------- call site
# Methods that change a `Sequential` (or any container module) in place; `add_module` gives an
# empty `nn.Sequential()` its layers one by one, so it is no identity any more.
LAYER_MUTATORS = {"append", "extend", "insert", "pop", "add_module", "register_module"}


class CallSite:
    """The interpreter's side of one call, as layer and op rules see it."""

    __slots__ = ("frame", "node", "env", "_callee", "_label", "children", "path")

    def __init__(self, frame: Frame, node: ast.Call, env: dict[str, Value], callee=None, label=None, path=()):
        self.frame, self.node, self.env = frame, node, env
        self._callee = callee  # None: the source of the called expression; a function: built on demand
        self._label = label
        self.children = 0
        self.path = path  # child indexes inside containers (`Sequential`)

    @property
    def callee(self) -> str:
        """Source text of what is called (`self.fc`), for messages."""
        if self._callee is None:
            self._callee = self.frame.scope.text(self.node.func)
        elif not isinstance(self._callee, str):
            self._callee = self._callee()
        return self._callee

    @property
    def label(self) -> str:
        if self._label is None:
            return self.callee
        if not isinstance(self._label, str):
            self._label = self._label()
        return self._label

    def origin(self, text: str) -> Origin:
        return self.frame.scope.origin(text, self.node.lineno)

    def here(self) -> Origin:
        return self.frame.scope.source_origin(self.node)

    def layer_origin(self, layer: Layer) -> Origin:
        # The callee's text now, not the call site: the site holds its environment, whose
        # values would hold this origin, a cycle that outlives the version it was made for
        # (`Engine.release` frees the rest by reference counting).
        return self.frame.scope.origin((_layer_text, self.callee, layer), self.node.lineno)

    def fail(self, message: str, kind: str = "shape") -> None:
        self.frame.fail(self.node, message, kind)

    def require(self, value: Value, needed: Tensor) -> Tensor:
        """The input must have `needed`'s trailing dims (`x: [*, 128]` because it feeds Linear(128, ...))."""
        required = needed.with_origin(self.frame.scope.origin(f"`{self.callee}`", self.node.lineno, "required by"))
        current = value if isinstance(value, Tensor) else None
        if current is not None and current.dims:
            return current
        if isinstance(value, (Opaque, Tensor)):
            self.frame.refine(value, required, self.env)
        return required

    def call(self, callee: Value, args: list[Value]) -> Value:
        """A child of a container (a `Sequential` layer) called with `args`."""
        index = self.children
        self.children += 1
        site = CallSite(self.frame, self.node, self.env, lambda: f"{self.callee}[{index}]",
                        lambda: f"{self.label}.{index}", self.path + (index,))
        return self.frame.call(callee, args, {}, site)

    def module_called(self, module: Value, output: Value, frame: Frame | None) -> None:
        calls = self.frame.module_calls
        key = (id(self.node), self.path)
        known = calls.get(key)
        if known is not None:
            known.output = join(known.output, output)
            known.frame = known.frame or frame
        else:
            calls[key] = ModuleCall(self, module, output, frame)


def length_of(value: Value) -> Value:
    if isinstance(value, (TupleValue,)):
        return Int(Dim.const(len(value.items)))
    if isinstance(value, ListValue):
        return Int(Dim.const(len(value.items))) if value.exact else Int(None)
    if isinstance(value, SizeOf):
        return Int(Dim.const(value.tensor.rank)) if value.tensor.rank is not None else Int(None)
    if isinstance(value, Tensor):
        return Int(value.dim(0)) if value.rank else Int(None)
    if isinstance(value, Layer) and value.kind.name == "Sequential":
        return Int(Dim.const(len(value.children)))
    if isinstance(value, DictValue) and value.exact:
        return Int(Dim.const(len(value.items)))
    if isinstance(value, RangeValue):
        return Int(value.length())
    if isinstance(value, Str):
        return Int(Dim.const(len(value.value)))
    return Int(None)


def sequence_builtin(name: str, args: list[Value], frame: Frame) -> Value:
    if name in ("list", "tuple", "sorted") and len(args) == 1:
        source = args[0]
        items = frame.unrolled(source) if not isinstance(source, DictValue) else None
        if items is None and isinstance(source, (TupleValue, ListValue)) and (
                not isinstance(source, ListValue) or source.exact):
            items = fn.items_of(source)
        if items is not None and name != "sorted":
            return ListValue(items) if name == "list" else TupleValue(tuple(items))
        return ListValue([], exact=False, element=frame.element_of(source))
    if name == "reversed" and len(args) == 1:
        items = frame.unrolled(args[0]) or (fn.items_of(args[0]) if isinstance(args[0], (TupleValue, ListValue))
                                            and getattr(args[0], "exact", True) else None)
        if items is not None:
            return ListValue(list(reversed(items)))
        return ListValue([], exact=False, element=frame.element_of(args[0]))
    if name == "enumerate" and args:
        items = frame.unrolled(args[0])
        if items is not None:
            return ListValue([TupleValue((Int(Dim.const(i)), item)) for i, item in enumerate(items)])
        return ListValue([], exact=False, element=TupleValue((Int(None), frame.element_of(args[0]))))
    if name == "zip" and args:
        columns = [frame.unrolled(a) for a in args]
        if all(c is not None for c in columns):
            length = min(len(c) for c in columns)  # type: ignore[arg-type]
            return ListValue([TupleValue(tuple(c[i] for c in columns)) for i in range(length)])  # type: ignore[index]
        return ListValue([], exact=False, element=TupleValue(tuple(frame.element_of(a) for a in args)))
    return UNKNOWN


def _layer_text(callee: str, layer: Layer) -> str:
    return f"{callee}: {layer.kind.describe(layer)}"

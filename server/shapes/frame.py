"""One run of one function (or module body) over abstract values: arguments,
statements, control flow, assignment; expressions and calls are in `expressions`
and `calls`."""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable

from torch_lsp.shapes import functions as fn
from torch_lsp.shapes import ops
from torch_lsp.shapes.calls import CallRules, ModuleCall
from torch_lsp.shapes.dims import Dim, product
from torch_lsp.shapes.expressions import EXPRESSION_METHODS, ExpressionRules
from torch_lsp.shapes.loaders import LoaderValue
from torch_lsp.shapes.limits import Budget
from torch_lsp.shapes.stated import annotation_shape, comment_shape, merge_stated, parameter_shape
from torch_lsp.shapes.syntax import (
    breaks_or_continues, is_parameter_call, module_body, shape_subject,
)
from torch_lsp.shapes.values import (
    NONE, UNKNOWN, UNKNOWN_TENSOR, ClassRef, DictValue, FunctionRef, Instance, Int, Layer, ListValue, Opaque, SizeOf, Str,
    Tensor, TupleValue, Value, join, join_all,
)

if TYPE_CHECKING:
    from torch_lsp.shapes.interpret import Engine, ModuleScope


# Parameters one module may share with another (weight tying).
TIEABLE_PARAMETERS = ("weight", "bias")


@dataclass(eq=False)
class Mismatch:
    node: ast.AST
    message: str
    frame: "Frame"
    kind: str = "shape"  # "shape" (TL501) | "dtype" (TL503)


class Frame(ExpressionRules, CallRules):
    """One interpretation of one function (or module body) in one call context."""

    def __init__(self, engine: Engine, scope: ModuleScope, node: ast.AST, self_value: Value | None,
                 standalone: bool = False, owner: ClassRef | None = None, record: bool = True):
        self.engine = engine
        self.scope = scope
        self.node = node
        self.self_value = self_value
        self.owner = owner
        self.standalone = standalone
        self.recording = record and scope.is_main
        self.values: dict[ast.AST, Value] = {}
        self.params: dict[str, Value] = {}
        self.param_nodes: dict[str, ast.arg] = {}
        self.returns: list[Value] = []
        self.module_calls: dict[tuple, ModuleCall] = {}  # by (call node, label), in call order
        self.caller: tuple[Frame | None, ast.AST | None] | None = None
        self.result: Value = UNKNOWN
        self.self_name: str | None = None
        self.loops: list[tuple[list, list]] = []
        self.inexact_depth = 0
        self.try_depth = 0
        self.informative = False
        self.is_init = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "__init__"
        self.closure: dict[str, Value] | None = None
        self.nested: bool | None = None  # a def inside a def (known on first global lookup)
        self.claimed_inputs = False  # the operation being evaluated reads claimed sizes
        # Reached from module-level code or a plain function (a real call site), rather
        # than from another method's symbolic run.
        self.from_call_site = not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or owner is None

    # -- entry points --------------------------------------------------------------------
    def run_module(self) -> bool:
        """Runs the module's body; False when a statement ended it (`raise`, `sys.exit()`)."""
        env = self.scope.globals
        env.setdefault("__name__", Str("__main__" if self.scope.is_main else "module"))
        for stmt in module_body(self.node, self.scope.is_main):
            result = self.stmt(stmt, env)
            if result is None:
                return False
            if result is not env:  # a branch joined into a new dict: keep the globals object
                env.clear()
                env.update(result)
        return True

    def bind_arguments(self, args: list[Value], kwargs: dict[str, Value]) -> None:
        signature = self.engine.signature(self.node)
        positional = signature.positional
        values = args
        if self.self_value is not None and positional:
            self.self_name = positional[0].arg
            positional = positional[1:]
        informative = self.self_value is not None and not getattr(self.self_value, "standalone", True)
        defaults = signature.defaults
        count = len(positional)
        for index, param in enumerate(positional + signature.kwonly if signature.kwonly else positional):
            name = param.arg
            if index < count and index < len(values):
                value = values[index]
            elif name in kwargs:
                value = kwargs[name]
            elif name in defaults:
                value = self.eval(defaults[name], {})
            else:
                value = Opaque(name, Dim.symbol(name))
            value = self._stated_parameter(param, value)
            if value.__class__ is Tensor and value.has_shape or value.__class__ is Int and value.dim is not None \
                    or value.__class__ is LoaderValue and value.batch is not UNKNOWN:
                informative = True
            self.params[name] = value
            self.param_nodes[name] = param
        if signature.vararg is not None:
            extra = values[count:]
            self.params[signature.vararg.arg] = TupleValue(tuple(extra))
        if signature.kwarg is not None:
            self.params[signature.kwarg.arg] = UNKNOWN
        self.informative = informative

    def _stated_parameter(self, param: ast.arg, value: Value) -> Value:
        cache = self.engine.stated_parameters
        if param not in cache:
            cache[param] = annotation_shape(param.annotation, param.lineno) or parameter_shape(
                self.scope.lines, self.node, param.arg)
        stated = cache[param]
        if stated is None:
            return value
        if isinstance(value, Tensor):
            return merge_stated(value, stated)
        if isinstance(value, Opaque) or value is UNKNOWN:
            return stated.tensor()
        return value

    def run_function(self) -> None:
        env: dict[str, Value] = dict(self.params)
        if self.self_name is not None:
            env[self.self_name] = self.self_value  # type: ignore[assignment]
        try:
            end = self.block(self.node.body, env)
        except Budget:
            self.result = UNKNOWN
            raise
        outcomes = list(self.returns)
        if end is not None:
            outcomes.append(NONE)
            self._write_back(end)
        result = join_all(outcomes) if outcomes else UNKNOWN
        if self.scope.may_yield and self.engine.is_generator(self.node):
            result = UNKNOWN  # calling it makes a generator, whatever it returns
        stated = annotation_shape(getattr(self.node, "returns", None), self.node.lineno)
        if stated is not None and (not isinstance(result, Tensor) or not result.fully_known):
            result = merge_stated(result if isinstance(result, Tensor) else None, stated)
        self.result = result
        for name, param in self.param_nodes.items():
            self.record(param, self.params[name])

    def _write_back(self, env: dict[str, Value]) -> None:
        """`__init__` leaves its `self.x = ...` bindings on the instance."""
        if not self.is_init or not isinstance(self.self_value, Instance):
            return
        prefix = f"{self.self_name}."
        for key, value in env.items():
            if key.startswith(prefix) and key.count(".") == 1:
                self.self_value.attrs[key[len(prefix):]] = _placeholder_unknown(value)

    # -- recording -----------------------------------------------------------------------
    def record(self, node: ast.AST, value: Value) -> None:
        if not self.recording:
            return
        values = self.values
        old = values.get(node)
        values[node] = value if old is None or old is value else join(old, value)

    def fail(self, node: ast.AST, message: str, kind: str = "shape") -> None:
        if self.try_depth or self.claimed_inputs:
            return  # the code handles the error itself, or a size is only claimed by a comment
        self.engine.mismatches.append(Mismatch(node, message, self, kind))

    # -- statements ----------------------------------------------------------------------
    def block(self, body: Iterable[ast.stmt], env: dict[str, Value] | None) -> dict[str, Value] | None:
        engine = self.engine
        for stmt in body:  # `stmt`, inlined: this loop runs for every statement of the file
            if env is None:
                return None
            engine.steps += 1
            if engine.steps > engine.step_limit:
                engine.limit_reached()
            handler = _STATEMENTS.get(stmt.__class__)
            if handler is not None:
                env = handler(self, stmt, env)
        return env

    def stmt(self, stmt: ast.stmt, env: dict[str, Value]) -> dict[str, Value] | None:
        engine = self.engine
        engine.steps += 1
        if engine.steps > engine.step_limit:
            engine.limit_reached()
        handler = _STATEMENTS.get(type(stmt))
        if handler is None:
            return env
        return handler(self, stmt, env)

    def _assign(self, stmt: ast.Assign, env):
        value = self.eval(stmt.value, env)
        targets = stmt.targets
        if len(targets) == 1 and targets[0].__class__ is ast.Name:  # the most common statement: `name = expression`
            self._bind_name(targets[0], value, env, stmt)
            return env
        for target in targets:
            self.assign(target, value, env, stmt)
        return env

    def _ann_assign(self, stmt: ast.AnnAssign, env):
        if stmt.value is None:
            return env
        value = self.eval(stmt.value, env)
        stated = annotation_shape(stmt.annotation, stmt.lineno)
        if stated is not None and (isinstance(value, Tensor) or value is UNKNOWN or isinstance(value, Opaque)):
            value = merge_stated(value if isinstance(value, Tensor) else None, stated)
        self.assign(stmt.target, value, env, stmt)
        return env

    def _aug_assign(self, stmt: ast.AugAssign, env):
        current = self.eval(stmt.target, env) if isinstance(stmt.target, (ast.Name, ast.Attribute)) else UNKNOWN
        value = self.binop(stmt.op, current, self.eval(stmt.value, env), stmt)
        if isinstance(current, Tensor) and isinstance(value, Tensor):
            value = value.with_dims(value.dims, dtype=current.dtype)  # in place: the target keeps its dtype
        if isinstance(stmt.target, (ast.Name, ast.Attribute)):
            self.assign(stmt.target, value, env, stmt)
        else:
            self.eval(stmt.target, env)
        return env

    def _expr(self, stmt: ast.Expr, env):
        self.eval(stmt.value, env)
        return env

    def _return(self, stmt: ast.Return, env):
        self.returns.append(self.eval(stmt.value, env) if stmt.value is not None else NONE)
        return None

    def _raise(self, stmt: ast.Raise, env):
        return None

    def _break(self, stmt, env):
        if self.loops:
            self.loops[-1][0].append(env)
        return None

    def _continue(self, stmt, env):
        if self.loops:
            self.loops[-1][1].append(env)
        return None

    def _if(self, stmt: ast.If, env):
        truth = self.truth(self.eval(stmt.test, env))
        if truth is True:
            return self.block(stmt.body, env)
        if truth is False:
            return self.block(stmt.orelse, env)
        self.inexact_depth += 1
        try:
            taken = self.block(stmt.body, dict(env))
            skipped = self.block(stmt.orelse, dict(env))
        finally:
            self.inexact_depth -= 1
        return join_envs([taken, skipped])

    def _with(self, stmt, env):
        for item in stmt.items:
            self.eval(item.context_expr, env)
            if item.optional_vars is not None:
                self.assign(item.optional_vars, UNKNOWN, env, stmt)
        return self.block(stmt.body, env)

    def _try(self, stmt, env):
        handled = bool(stmt.handlers)
        self.try_depth += handled
        try:
            body_end = self.block(stmt.body, dict(env))
        finally:
            self.try_depth -= handled
        outcomes = [self.block(stmt.orelse, body_end) if body_end is not None else None]
        for handler in stmt.handlers:
            start = join_envs([dict(env), body_end]) or dict(env)
            if handler.name:
                start[handler.name] = UNKNOWN
            outcomes.append(self.block(handler.body, start))
        merged = join_envs(outcomes)
        if stmt.finalbody:
            after = self.block(stmt.finalbody, merged if merged is not None else dict(env))
            return after if merged is not None else None
        return merged

    def _function_def(self, stmt, env):
        env[stmt.name] = FunctionRef(stmt, self.scope, None, None)
        return env

    def _class_def(self, stmt: ast.ClassDef, env):
        env[stmt.name] = self.engine.class_ref(stmt, self.scope)
        return env

    def _import(self, stmt, env):
        for alias in stmt.names:
            name = (alias.asname or alias.name).split(".")[0]
            if name in env and env is not self.scope.globals:
                del env[name]
            elif env is self.scope.globals:
                env.pop(name, None)
        return env

    def _delete(self, stmt: ast.Delete, env):
        for target in stmt.targets:
            if isinstance(target, ast.Name):
                env.pop(target.id, None)
            elif isinstance(target, ast.Subscript):
                self._delete_item(target, env)
        return env

    def _delete_item(self, target: ast.Subscript, env) -> None:
        """`del net[-1]`, `del config["dropout"]`, `del items[0]`: the container changes."""
        container = self.eval(target.value, env)
        if isinstance(container, DictValue):
            key = self.eval(target.slice, env)
            if isinstance(key, Str):
                container.items.pop(key.value, None)
            else:
                container.items.clear()
            container.exact = container.exact and isinstance(key, Str) and self.inexact_depth == 0
        elif isinstance(container, ListValue):
            container.mark_inexact()
        elif isinstance(container, Layer):
            self.forget(target.value, env)

    def forget(self, node: ast.AST, env) -> None:
        """A module changed in place in a way not modelled (`net[-1] = nn.Linear(32, 4)`,
        `net.append(...)` on a `Sequential`): the name or `self.` attribute that holds it no
        longer holds what was known.  (Attributes of other objects changed this way are
        volatile from the start: `assigned_foreign_attributes`.)"""
        if isinstance(node, ast.Name):
            env[node.id] = UNKNOWN
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id == self.self_name and self.self_name is not None:
            env[f"{self.self_name}.{node.attr}"] = UNKNOWN
            instance = self.self_value
            if isinstance(instance, Instance) and (self.is_init or _called_from_init(self)):
                instance.attrs[node.attr] = UNKNOWN
                instance.changes += 1

    def _assert(self, stmt: ast.Assert, env):
        self.eval(stmt.test, env)
        self.refine_from_assertion(stmt.test, env, stmt)
        return env

    def _match(self, stmt: ast.Match, env):
        self.eval(stmt.subject, env)
        self.inexact_depth += 1
        try:
            outcomes = [self.block(case.body, dict(env)) for case in stmt.cases] + [dict(env)]
        finally:
            self.inexact_depth -= 1
        return join_envs(outcomes)

    # -- loops ---------------------------------------------------------------------------
    def _for(self, stmt, env):
        iterable = self.eval(stmt.iter, env)
        items = self.unrolled(iterable)
        if items is not None and not breaks_or_continues(stmt.body):
            for item in items:
                self.assign(stmt.target, item, env, stmt)
                env = self.block(stmt.body, env)
                if env is None:
                    return None
            return self.block(stmt.orelse, env)
        element = self.element_of(iterable)
        return self.general_loop(stmt, env, lambda e: self.assign(stmt.target, element, e, stmt))

    def _while(self, stmt: ast.While, env):
        truth = self.truth(self.eval(stmt.test, env))
        if truth is False:
            return self.block(stmt.orelse, env)
        after = self.general_loop(stmt, env, lambda e: self.eval(stmt.test, e), endless=truth is True)
        return after

    def general_loop(self, stmt, env, bind, endless: bool = False):
        # Every pass records: what the first pass sees is exactly the first iteration, later
        # passes cover the others, and records of one node are joined.
        self.inexact_depth += 1
        try:
            first, breaks = self._loop_pass(stmt, env, bind)
            stable = join_envs([env, first]) or env
            if not envs_equal(stable, env, only_old=True):  # the body changes what it reads
                joined = stable
                second, breaks = self._loop_pass(stmt, joined, bind)
                stable = join_envs([joined, second]) or joined
                if not envs_equal(stable, joined):
                    widened = widen(joined, stable)
                    third, breaks = self._loop_pass(stmt, widened, bind)
                    stable = join_envs([widened, third]) or widened
        finally:
            self.inexact_depth -= 1
        exits = breaks + ([] if endless else [stable])
        after = join_envs(exits)
        if after is None:
            return None
        return self.block(stmt.orelse, after) if not endless else after

    def _loop_pass(self, stmt, env, bind):
        start = dict(env)
        bind(start)
        self.loops.append(([], []))
        try:
            end = self.block(stmt.body, start)
        finally:
            breaks, continues = self.loops.pop()
        return join_envs([end] + continues) or dict(env), breaks

    # -- assignment ----------------------------------------------------------------------
    def assign(self, target: ast.AST, value: Value, env: dict[str, Value], stmt: ast.stmt) -> None:
        if target.__class__ is ast.Name:
            self._bind_name(target, value, env, stmt)
        elif isinstance(target, ast.Attribute):
            self._assign_attribute(target, value, env, stmt)
        elif isinstance(target, (ast.Tuple, ast.List)):
            self.unpack(target, value, env, stmt)
        elif isinstance(target, ast.Subscript):
            self._assign_item(target, value, env)
        elif isinstance(target, ast.Starred):
            self.assign(target.value, UNKNOWN, env, stmt)

    def _bind_name(self, target: ast.Name, value: Value, env: dict[str, Value], stmt: ast.stmt) -> None:
        """`name = value`, with the shape a comment states where the value leaves it open."""
        kind = value.__class__
        if kind is Tensor and not value.fully_known or value is UNKNOWN or kind is Opaque:  # `_with_comment`'s test
            value = self._with_comment(target.id, value, stmt)
            if value is UNKNOWN_TENSOR:
                value = Tensor((), True)  # its own object, so that later facts refine only this name
        env[target.id] = value
        if self.recording:
            values = self.values
            old = values.get(target)
            values[target] = value if old is None else join(old, value)

    def _with_comment(self, name: str, value: Value, stmt: ast.stmt) -> Value:
        kind = value.__class__
        if kind is Tensor:
            if value.fully_known:
                return value
        elif not (value is UNKNOWN or kind is Opaque):
            return value
        if not isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            return value
        if isinstance(stmt, ast.Assign) and (len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name)):
            return value
        cache = self.engine.stated_comments
        key = (stmt, name)
        if key in cache:
            stated = cache[key]
        else:
            stated = cache[key] = comment_shape(self.scope.lines, stmt, name)
        if stated is None:
            return value
        return merge_stated(value if isinstance(value, Tensor) else None, stated)

    def _assign_attribute(self, target: ast.Attribute, value: Value, env, stmt) -> None:
        owner = target.value
        if isinstance(owner, ast.Name) and owner.id == self.self_name and self.self_name is not None:
            env[f"{self.self_name}.{target.attr}"] = value
            instance = self.self_value
            if isinstance(instance, Instance):
                if self.is_init or _called_from_init(self):
                    instance.attrs[target.attr] = _placeholder_unknown(value)
                    instance.changes += 1
                if isinstance(stmt, ast.Assign) and is_parameter_call(self.scope.analysis, stmt.value):
                    instance.parameters.add(target.attr)
            self.record(target, value)
        else:
            module = self.eval(owner, env)
            if isinstance(stmt, ast.Assign) and target.attr in TIEABLE_PARAMETERS:
                self._tie_parameter(module, target.attr, stmt.value, env)

    def _tie_parameter(self, module: Value, name: str, source: ast.AST, env) -> None:
        """`self.transformer.wte.weight = self.lm_head.weight` in `__init__`: one tensor, two
        modules; the model counts it once (the replaced parameter is recorded on the model)."""
        instance = self.self_value
        if not isinstance(instance, Instance) or not (self.is_init or _called_from_init(self)):
            return
        if not isinstance(module, Layer) or not isinstance(source, ast.Attribute) or source.attr not in TIEABLE_PARAMETERS:
            return
        if not isinstance(self.eval(source.value, env), (Layer, Instance)):
            return
        replaced = module.kind.weights(module).get(name)
        if isinstance(replaced, Tensor) and replaced.fully_known:
            instance.tied.append(product(replaced.dims))
        else:
            instance.tied.append(None)

    def _assign_item(self, target: ast.Subscript, value: Value, env) -> None:
        container = self.eval(target.value, env)
        if isinstance(container, Layer):
            self.forget(target.value, env)  # `net[-1] = nn.Linear(32, 4)`
            return
        key = self.eval(target.slice, env)
        if isinstance(container, DictValue):
            if isinstance(key, Str) and self.inexact_depth == 0:
                container.items[key.value] = value
            else:
                container.exact = False
        elif isinstance(container, ListValue):
            index = fn.int_of(key)
            if index is not None and container.exact and -len(container.items) <= index < len(container.items) \
                    and self.inexact_depth == 0:
                container.items[index] = value
                container.element = join_all(container.items)
            else:
                container.mark_inexact()
                container.element = join(container.element, value)

    def unpack(self, target: ast.Tuple | ast.List, value: Value, env, stmt) -> None:
        targets = target.elts
        starred = [i for i, t in enumerate(targets) if isinstance(t, ast.Starred)]
        if isinstance(value, SizeOf) and not starred:
            value = self.refine_from_unpacking(value, targets, env, stmt)
        items = fn.items_of(value)
        if items is not None:
            if starred:
                cut = starred[0]
                tail = len(targets) - cut - 1
                if len(items) >= len(targets) - 1:
                    middle = items[cut:len(items) - tail]
                    items = items[:cut] + [ListValue(middle)] + items[len(items) - tail:]
                else:
                    items = None
            if items is not None and len(items) == len(targets):
                for t, item in zip(targets, items):
                    self.assign(t.value if isinstance(t, ast.Starred) else t, item, env, stmt)
                return
        element = UNKNOWN
        if isinstance(value, ListValue) and not value.exact:
            element = value.element
        elif isinstance(value, Tensor) and value.rank is not None and value.rank >= 1:
            first = value.dims[0].as_int() if value.dims[0] is not None else None
            if first is None or first == len(targets):
                element = Tensor(value.dims[1:], False, value.dtype, value.origin)
        for t in targets:
            if isinstance(t, ast.Starred):
                self.assign(t.value, UNKNOWN, env, stmt)
            else:
                self.assign(t, element, env, stmt)

    def refine_from_unpacking(self, size: SizeOf, targets: list[ast.AST], env, stmt) -> Value:
        """`B, T, C = x.size()`: x has rank 3, and its unknown sizes get the names B, T, C."""
        tensor = ops.with_rank(size.tensor, len(targets))
        if tensor is None:
            return UNKNOWN
        dims = list(tensor.dims)
        for index, target in enumerate(targets):
            if dims[index] is None and isinstance(target, ast.Name) and target.id != "_":
                dims[index] = Dim.symbol(target.id)
        scope = self.scope
        origin = tensor.origin if tensor.fully_known else scope.origin(lambda: f"`{scope.text(stmt, 60)}`", stmt.lineno)
        refined = Tensor(tuple(dims), False, tensor.dtype, origin)
        self.refine(size.source, refined, env)
        return TupleValue(tuple(Int(d) for d in dims))

    def refine(self, old: Value, new: Value, env: dict[str, Value]) -> None:
        """What the code just proved about a value replaces it everywhere it is bound."""
        if old is UNKNOWN or old is UNKNOWN_TENSOR or old is new:
            return
        for name, value in list(env.items()):
            if value is old:
                env[name] = new
        for name, value in list(self.params.items()):
            if value is old:
                self.params[name] = new

    def refine_from_assertion(self, test: ast.AST, env, stmt) -> None:
        """`assert x.shape == (B, T, C)`, `assert x.dim() == 4`, `assert x.ndim == 4`."""
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            for value in test.values:
                self.refine_from_assertion(value, env, stmt)
            return
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
            return
        left, right = test.left, test.comparators[0]
        subject = shape_subject(left) or shape_subject(right)
        if subject is None:
            return
        node, kind = subject
        other = right if shape_subject(left) else left
        source = self.eval(node, env) if isinstance(node, ast.Name) else None
        if source is None or not isinstance(node, ast.Name):
            return
        current = source if isinstance(source, Tensor) else UNKNOWN_TENSOR
        scope = self.scope
        origin = scope.origin(lambda: f"`{scope.text(stmt, 60)}`", stmt.lineno)
        if kind == "rank":
            rank = fn.int_of(self.eval(other, env))
            fixed = ops.with_rank(current, rank) if rank is not None else None
            if fixed is not None and fixed is not current:
                self.refine(source, fixed.with_origin(fixed.origin or origin), env)
            return
        stated = fn.items_of(self.eval(other, env))
        if stated is None:
            return
        dims = tuple(fn.dim_of(v) for v in stated)
        fixed = ops.with_rank(current, len(dims))
        if fixed is None:
            return
        merged = tuple(own if own is not None else told for own, told in zip(fixed.dims, dims))
        self.refine(source, Tensor(merged, False, fixed.dtype, fixed.origin if fixed.fully_known else origin), env)


# ------------------------------------------------------------------ helpers
def join_envs(envs: list[dict[str, Value] | None]) -> dict[str, Value] | None:
    live = [e for e in envs if e is not None]
    if not live:
        return None
    if len(live) == 1:
        return dict(live[0])
    result = dict(live[0])
    for other in live[1:]:
        for name, value in other.items():
            current = result.get(name)
            if current is not value:
                result[name] = value if current is None else join(current, value)
    return result


def envs_equal(a: dict[str, Value], b: dict[str, Value], only_old: bool = False) -> bool:
    """Same bindings; with `only_old`, names `a` adds to `b` (first bound in a loop body) are ignored."""
    if not only_old and a.keys() != b.keys():
        return False
    for name, other in b.items():
        value = a.get(name)
        if value is None:
            return False
        if value is not other and value.key != other.key:
            return False
    return True


def widen(before: dict[str, Value], after: dict[str, Value]) -> dict[str, Value]:
    """Names still changing after two passes become unknown (keeps loops to three passes);
    a tensor whose dtype alone changes keeps its shape and loses only the dtype."""
    result = dict(after)
    for name, value in after.items():
        old = before.get(name)
        if old is not None and old is not value and old.key != value.key:
            if value.__class__ is Tensor and old.__class__ is Tensor and old.dims == value.dims \
                    and old.variadic == value.variadic:
                result[name] = Tensor(value.dims, value.variadic, None, value.origin, value.claimed)
            else:
                result[name] = UNKNOWN_TENSOR if isinstance(value, Tensor) else UNKNOWN
    return result


def _called_from_init(frame: Frame) -> bool:
    caller = frame.caller[0] if frame.caller else None
    return caller is not None and caller.is_init and caller.self_value is frame.self_value


_STATEMENTS = {
    ast.Assign: Frame._assign, ast.AnnAssign: Frame._ann_assign, ast.AugAssign: Frame._aug_assign,
    ast.Expr: Frame._expr, ast.Return: Frame._return, ast.Raise: Frame._raise, ast.Break: Frame._break,
    ast.Continue: Frame._continue, ast.If: Frame._if, ast.With: Frame._with, ast.AsyncWith: Frame._with,
    ast.Try: Frame._try, ast.For: Frame._for, ast.AsyncFor: Frame._for, ast.While: Frame._while,
    ast.FunctionDef: Frame._function_def, ast.AsyncFunctionDef: Frame._function_def, ast.ClassDef: Frame._class_def,
    ast.Import: Frame._import, ast.ImportFrom: Frame._import, ast.Delete: Frame._delete, ast.Assert: Frame._assert,
    ast.Match: Frame._match,
}
if hasattr(ast, "TryStar"):
    _STATEMENTS[ast.TryStar] = Frame._try
Frame.expression_handlers = {kind: getattr(Frame, name) for kind, name in EXPRESSION_METHODS.items()}


def _placeholder_unknown(value: Value) -> Value:
    """An empty tensor kept on the module (`self.kv_cache = (torch.tensor([]), torch.tensor([]))`,
    "vLLM populates this"): a placeholder that something outside the class fills before any
    method reads it, so the methods see a tensor of unknown shape, not a 0-element one."""
    if value.__class__ is Tensor and not value.variadic and any(
            d is not None and d.as_int() == 0 for d in value.dims):
        return UNKNOWN_TENSOR
    if value.__class__ is TupleValue and any(item.__class__ is Tensor for item in value.items):
        items = tuple(_placeholder_unknown(item) for item in value.items)
        return value if all(a is b for a, b in zip(items, value.items)) else TupleValue(items, value.names)
    return value

"""The abstract interpreter: runs a file's code over abstract values, once per function
and call context, and records the value of every name and call it meets.

- The module body runs first: classes and functions are bound, and module-level code
  (`model = Net(); out = model(torch.randn(8, 1, 28, 28))`) builds instances and calls
  them with concrete shapes.  Each call of a function with new argument values is a
  *derived frame*, memoised by (function, self, arguments).
- Then every function runs *standalone*: parameters are `Opaque` (only their names
  known) unless an annotation, comment or docstring states a shape; methods get a
  standalone instance of their class whose `__init__` ran with opaque arguments, so
  `nn.Linear(config.n_embd, 3 * config.n_embd)` has the symbolic size `n_embd`.
- Branches run both ways (unless the condition is known) and their environments are
  joined; loops over known sequences are unrolled, other loops run until their
  environment is stable (at most three passes).  Mutations of lists under unknown
  conditions or in loops make them inexact.

Definite mismatches found on the way are recorded with the node and frame; the
report decides where and how they are shown.

Here: the `Engine` (frames, memo, classes and instances, imports from other files)
and each file's `ModuleScope`.  A run of one function is a `Frame` (frame.py), which
evaluates expressions (expressions.py) and calls (calls.py).
"""
from __future__ import annotations

import ast
from functools import cached_property
import gc
from typing import TYPE_CHECKING, Any

from torch_lsp.shapes.dims import Dim
from torch_lsp.shapes.frame import Frame, Mismatch
from torch_lsp.shapes.loaders import LoaderValue
from torch_lsp.shapes.limits import (
    MAX_CALL_DEPTH, MAX_CONTEXTS, MAX_FUNCTION_CONTEXTS, MAX_STEPS, MAX_TEXT, STOP_CHECK_STEPS, Budget, Superseded,
    stop_request,
)
from torch_lsp.shapes.syntax import (
    DATACLASS_DECORATORS, Signature, assigned_foreign_attributes, builders_of_init, is_generator,
    self_attributes_assigned, takes_self,
)
from torch_lsp.shapes.values import (
    UNKNOWN, ClassRef, DictValue, FunctionRef, Instance, Int, Layer, ListValue, Opaque, Origin, Tensor, TupleValue,
    Value, forget_sizes,
)

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.shapes.components import Part


class ModuleScope:
    """One analysed file and the values of its top-level names."""

    def __init__(self, analysis: "Analysis", is_main: bool):
        self.analysis = analysis
        self.is_main = is_main
        self.globals: dict[str, Value] = {}
        self.lines = analysis.lines
        self.imported: dict[str, Value] = {}  # imported names, resolved once
        self.may_yield = "yield" in analysis.source  # else no function of the file is a generator

    def origin(self, text, line: int, verb: str = "from") -> Origin:
        """An origin in this file; one in another file names it (`model.py, line 14`)."""
        return Origin(text, line, verb, None if self.is_main else self.file_name)

    def source_origin(self, node: ast.AST) -> Origin:
        """An origin whose text is the node's source (`self.fc(x)`), built when shown."""
        return Origin((ModuleScope.text, self, node), node.lineno, "from", None if self.is_main else self.file_name)

    @cached_property
    def rebound_globals(self) -> frozenset[str]:
        """Top-level names the module binds more than once (a notebook's `input = ...` in cell
        after cell): a function run with no call site cannot know which binding it reads."""
        counts: dict[str, int] = {}
        stack = list(self.analysis.tree.body)
        while stack:
            stmt = stack.pop()
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                counts[stmt.name] = counts.get(stmt.name, 0) + 1
                continue
            targets = []
            if isinstance(stmt, ast.Assign):
                targets = stmt.targets
            elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
                targets = [stmt.target]
            elif isinstance(stmt, (ast.For, ast.AsyncFor)):
                targets = [stmt.target]
            for target in targets:
                for node in ast.walk(target):
                    if isinstance(node, ast.Name):
                        counts[node.id] = counts.get(node.id, 0) + 1
            for field_name in ("body", "orelse", "finalbody", "handlers"):
                stack.extend(getattr(stmt, field_name, ()))
        return frozenset(name for name, count in counts.items() if count > 1)

    @property
    def file_name(self) -> str:
        return self.analysis.path.replace("\\", "/").rsplit("/", 1)[-1]

    def text(self, node: ast.AST, limit: int = MAX_TEXT) -> str:
        """Short source text of a node, one line (for origins and messages)."""
        line = getattr(node, "lineno", None)
        if line is None:
            return "?"
        if node.end_lineno == line:
            raw = self.lines.line_text(line).encode("utf-8")[node.col_offset:node.end_col_offset].decode(
                "utf-8", errors="ignore")
        else:
            raw = ast.unparse(node)
        raw = " ".join(raw.split())
        if len(raw) > limit:
            if isinstance(node, ast.Call):
                return self.text(node.func, limit) + "(...)"
            return raw[: limit - 3] + "..."
        return raw


# =========================================================================== engine
class Engine:
    """Runs the main file and whatever it needs; keeps every frame for the report."""

    def __init__(self, analysis: "Analysis", resolver=None, part: "Part | None" = None):
        self.main = ModuleScope(analysis, True)
        # One independent part of the file (`components`), or None: the whole file.
        self.part = part
        self.resolver = resolver
        self.foreign: dict[str, ModuleScope | None] = {}
        self.frames: dict[Any, Frame] = {}
        self.frames_by_function: dict[ast.AST, list[Frame]] = {}
        # Lambdas made, each holding the environment it was made in (which holds it): cut
        # at `release`.
        self.lambdas: list[FunctionRef] = []
        self.active: set[Any] = set()
        self.instances: dict[Any, Instance] = {}
        self.standalone_instances: dict[ast.ClassDef, Instance] = {}
        self.class_refs: dict[ast.ClassDef, ClassRef] = {}
        self.class_attrs: dict[ast.ClassDef, dict[str, Value]] = {}
        self.class_bases: dict[ast.ClassDef, list[ClassRef]] = {}
        self.mismatches: list[Mismatch] = []
        self.steps = 0
        # Steps are compared with `step_limit` where they are counted; past it, `limit_reached`
        # raises `Budget` at the cap, or `Superseded` when the check is no longer wanted.
        self.stop_requested = stop_request()
        self.step_limit = MAX_STEPS if self.stop_requested is None else min(MAX_STEPS, STOP_CHECK_STEPS)
        self.depth = 0
        self.volatile: dict[ast.ClassDef, set[str]] = {}
        self.foreign_volatile: set[str] = set()
        self.exhausted = False
        self.module_completed = True  # False: a module-level statement ended the module's run
        self.nested: dict[ast.AST, bool] = {}
        self.stated_parameters: dict[ast.arg, Any] = {}  # what comments and annotations say of each parameter
        self.stated_comments: dict[tuple[ast.stmt, str], Any] = {}  # what a comment says of a name a line binds
        self.generators: dict[ast.AST, bool] = {}
        self.contexts: dict[ast.AST, int] = {}  # frames run per function
        self.instance_contexts: dict[tuple, int] = {}  # frames run per function and bound instance
        self.overflowed: set[ast.AST] = set()  # functions some call of which shared the standalone run
        self.enclosing: dict[ast.AST, set[str]] = {}
        self.function_locals: dict[ast.AST, set[str]] = {}
        self.signatures: dict[ast.AST, Signature] = {}
        self.dataclasses: dict[ast.ClassDef, bool] = {}
        # Call contexts a function may run in before its calls share its standalone run.  The
        # benchmark sets 0 to time the pass with no per-context runs at all: the floor that
        # evaluating each function once (function summaries) could bring the pass down to.
        self.max_function_contexts = MAX_FUNCTION_CONTEXTS

    # -- running ---------------------------------------------------------------------
    def run(self) -> None:
        # The pass allocates tens of thousands of objects and leaves no cyclic garbage (what
        # it keeps, the report holds), so the collections its allocations would trigger find
        # nothing to free and only re-scan everything alive, syntax trees included: a tenth
        # of its time, more when older document versions are still alive.  The collector is
        # paused and put back as it was (another thread's pass may hold it paused too).
        collecting = gc.isenabled()
        gc.disable()
        try:
            self._run()
        finally:
            if collecting:
                gc.enable()

    def _run(self) -> None:
        scope = self.main
        part = self.part
        if part is None:
            self.foreign_volatile = assigned_foreign_attributes(scope.analysis)
            module, functions = scope.analysis.tree, scope.analysis.functions
        else:
            self.foreign_volatile = set(part.foreign_volatile)
            module, functions = part.module, part.functions
            # One budget for all parts, and one question every `STOP_CHECK_STEPS` steps over
            # them all (a file of many small parts still stops when no longer wanted).
            self.steps = part.steps_before
            if self.step_limit < MAX_STEPS:
                self.step_limit = part.step_limit or min(MAX_STEPS, self.steps + STOP_CHECK_STEPS)
        module_frame = Frame(self, scope, module, None, standalone=True)
        self._register(module_frame, ("module", id(module)))
        try:
            self.module_completed = module_frame.run_module()
        except Budget:
            self.exhausted = True
        # Every function also runs on its own (symbolic) arguments: hover falls back on it
        # where call sites disagree, and rules ask it which dim is the batch.  Callers are
        # usually defined after their callees, so running from the last function up lets
        # callees first run in their callers' (more informed) contexts.
        for info in reversed(functions):
            if info.is_module:
                continue
            try:
                self.run_standalone(scope, info.node, info.class_node)
            except Budget:
                self.exhausted = True
                break

    def run_standalone(self, scope: ModuleScope, node: ast.AST, class_node: ast.ClassDef | None) -> None:
        owner = self.class_ref(class_node, scope) if class_node is not None else None
        bound = None
        if owner is not None and takes_self(node):
            bound = self.standalone_instance(owner)
        function = FunctionRef(node, scope, bound, owner)
        args = opaque_arguments(self.signature(node).names[1 if bound is not None else 0:])
        frame = self.call_function(function, args, {}, None, standalone=True)
        if frame is not None:
            frame.standalone = True

    def release(self) -> None:
        """Break the engine's reference cycles (frames, call sites, module scopes), so that a
        version nobody reads any more is freed by reference counting at once, not by a full
        garbage collection.  The engine answers nothing afterwards."""
        for frames in self.frames_by_function.values():
            for frame in frames:
                frame.__dict__.clear()
        for made in self.lambdas:
            made.closure = None
        for instance in self.instances.values():
            instance.attrs.clear()  # `self.dataset = self`, `self.act = self.relu`
        for scope in (self.main, *(s for s in self.foreign.values() if s is not None)):
            scope.__dict__.clear()
        self.__dict__.clear()

    def _register(self, frame: "Frame", key: Any) -> None:
        self.frames[key] = frame
        self.frames_by_function.setdefault(frame.node, []).append(frame)

    def signature(self, function: ast.AST) -> Signature:
        found = self.signatures.get(function)
        if found is None:
            found = self.signatures[function] = Signature(function)
        return found

    def is_generator(self, function: ast.AST) -> bool:
        found = self.generators.get(function)
        if found is None:
            found = self.generators[function] = is_generator(function)
        return found

    def tick(self, amount: int = 1) -> None:
        self.steps += amount
        if self.steps > self.step_limit:
            self.limit_reached()

    def limit_reached(self) -> None:
        """`steps` passed `step_limit`: stop at the cap, or when the check is no longer wanted;
        else ask again after `STOP_CHECK_STEPS` more."""
        if self.steps > MAX_STEPS:
            raise Budget()
        if self.stop_requested is not None and self.stop_requested():
            raise Superseded()
        self.step_limit = min(MAX_STEPS, self.steps + STOP_CHECK_STEPS)

    # -- classes ---------------------------------------------------------------------
    def class_ref(self, node: ast.ClassDef, scope: ModuleScope) -> ClassRef:
        ref = self.class_refs.get(node)
        if ref is None:
            ref = ClassRef(node, scope)
            self.class_refs[node] = ref
        return ref

    def class_attributes(self, ref: ClassRef) -> dict[str, Value]:
        """Values of the class body's simple assignments (constants, dataclass defaults)."""
        found = self.class_attrs.get(ref.node)
        if found is not None:
            return found
        found = {}
        self.class_attrs[ref.node] = found
        frame = Frame(self, ref.scope, ref.node, None, standalone=True, record=False)
        env: dict[str, Value] = {}
        for stmt in ref.node.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                found[stmt.targets[0].id] = frame.eval(stmt.value, env)
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
                found[stmt.target.id] = frame.eval(stmt.value, env)
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found[stmt.name] = FunctionRef(stmt, ref.scope, None, ref)
        return found

    def bases(self, ref: ClassRef) -> list[ClassRef]:
        """The class's bases that are classes of an analysed file (torch bases are not)."""
        found = self.class_bases.get(ref.node)
        if found is None:
            frame = Frame(self, ref.scope, ref.node, None, standalone=True, record=False)
            found = [v for v in (frame.eval(base, {}) for base in ref.node.bases) if isinstance(v, ClassRef)]
            self.class_bases[ref.node] = found
        return found

    def ancestry(self, ref: ClassRef) -> tuple[list[ClassRef], bool]:
        """The class and every base of it that is a class of an analysed file, and whether that
        is all of them: every other base is a torch class (`nn.Module`), which no class of the
        files derives from.  An unresolved base (a name from elsewhere) leaves it incomplete."""
        found: list[ClassRef] = []
        complete, pending = True, [ref]
        while pending and len(found) < 32:
            current = pending.pop()
            if any(known.node is current.node for known in found):
                continue
            found.append(current)
            resolved = self.bases(current)
            pending += resolved
            analysis = current.scope.analysis
            torch_bases = sum((analysis.qualname(b) or "").startswith("torch.") for b in current.node.bases)
            if len(resolved) + torch_bases != len(current.node.bases) or current.node.keywords:
                complete = False
        return found, complete and not pending

    def lookup_method(self, ref: ClassRef, name: str) -> FunctionRef | None:
        """The method `name` of the class or its nearest base that defines it as a function."""
        return self._lookup(ref, name, True, 0)  # type: ignore[return-value]

    def lookup_class_attribute(self, ref: ClassRef, name: str) -> Value | None:
        """The class attribute `name`, from the class or its nearest base that binds it."""
        return self._lookup(ref, name, False, 0)

    def _lookup(self, ref: ClassRef, name: str, functions_only: bool, depth: int) -> Value | None:
        if depth > 8:
            return None
        value = self.class_attributes(ref).get(name)
        if isinstance(value, FunctionRef) if functions_only else value is not None:
            return value
        for base in self.bases(ref):
            found = self._lookup(base, name, functions_only, depth + 1)
            if found is not None:
                return found
        return None

    def volatile_attributes(self, ref: ClassRef, depth: int = 0) -> set[str]:
        """Attributes assigned outside `__init__`, by the class's methods or its bases' (their
        value at any use is not known)."""
        found = self.volatile.get(ref.node)
        if found is None:
            found = set(self.foreign_volatile)
            assigned = {stmt.name: self_attributes_assigned(stmt) for stmt in ref.node.body
                        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name != "__init__"}
            assigned = {name: attributes for name, attributes in assigned.items() if attributes}
            builders = builders_of_init(ref.node, set(assigned)) if assigned else set()
            for name, attributes in assigned.items():
                if name not in builders:
                    found |= attributes
            if depth < 8:
                for base in self.bases(ref):  # `Detect._inference` sets `self.anchors` for `Pose` too
                    found |= self.volatile_attributes(base, depth + 1)
            self.volatile[ref.node] = found
        return found

    def is_dataclass(self, ref: ClassRef) -> bool:
        found = self.dataclasses.get(ref.node)
        if found is None:
            found = self.dataclasses[ref.node] = _is_dataclass(ref)
        return found

    def standalone_instance(self, ref: ClassRef) -> Instance:
        instance = self.standalone_instances.get(ref.node)
        if instance is not None:
            return instance
        init = self.lookup_method(ref, "__init__")
        args = opaque_arguments(self.signature(init.node).names[1:]) if init is not None else []
        instance = self.instantiate(ref, args, {}, None, standalone=True)
        self.standalone_instances[ref.node] = instance
        return instance

    def instantiate(self, ref: ClassRef, args: list[Value], kwargs: dict[str, Value], caller: "Frame | None",
                    site: ast.AST | None = None, standalone: bool = False) -> Instance:
        init = self.lookup_method(ref, "__init__")
        if init is not None:
            args, kwargs = normalized_arguments(self.signature(init.node), True, args, kwargs)
        key = ("new", id(ref.node), tuple([a.key for a in args]), keyword_key(kwargs))
        instance = self.instances.get(key)
        if instance is not None:
            return instance
        label = ref.name + ("(...)" if args or kwargs else "()")
        instance = Instance(ref, label, standalone)
        self.instances[key] = instance
        if self.is_dataclass(ref):
            self._fill_dataclass(instance, ref, args, kwargs)
            return instance
        init = self.lookup_method(ref, "__init__")
        if init is not None:
            bound = FunctionRef(init.node, init.scope, instance, init.owner)
            self.call_function(bound, args, kwargs, caller, site=site, standalone=standalone)
        return instance

    def _fill_dataclass(self, instance: Instance, ref: ClassRef, args: list[Value], kwargs: dict[str, Value]) -> None:
        defaults = self.class_attributes(ref)
        fields = [s.target.id for s in ref.node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
        for name, value in zip(fields, args):
            instance.attrs[name] = value
        for name in fields:
            if name in kwargs:
                instance.attrs[name] = kwargs[name]
            elif name not in instance.attrs:
                instance.attrs[name] = defaults.get(name, UNKNOWN)

    # -- functions ---------------------------------------------------------------------
    def call_function(self, function: FunctionRef, args: list[Value], kwargs: dict[str, Value],
                      caller: "Frame | None", site: ast.AST | None = None, standalone: bool = False) -> "Frame | None":
        """Run `function` with these arguments (memoised); the frame, or None when it cannot run."""
        node = function.node
        if node.__class__ is ast.Lambda:
            return None
        signature = self.signature(node)
        bound = function.bound_self is not None
        if not signature.accepts(bound, len(args), kwargs):
            return None  # the call raises `TypeError`: binding its arguments anyway would shift them
        args, kwargs = normalized_arguments(signature, bound, args, kwargs)
        instance_key = (node, id(function.bound_self))
        informative = says_something(function.bound_self, args, kwargs) or signature.leaves_sized_defaults(
            bound, len(args), kwargs) or _renames_sizes(signature, bound, args)
        if not standalone and (self.contexts.get(node, 0) >= self.max_function_contexts
                               or function.bound_self is not None
                               and self.instance_contexts.get(instance_key, 0) >= MAX_CONTEXTS or not informative):
            # Nothing new to learn, or enough contexts already: answer from the general run.
            if informative:
                self.overflowed.add(node)
            args, kwargs = opaque_arguments(signature.names[bound:]), {}
            if bound and function.owner is not None and takes_self(node):
                function = FunctionRef(node, function.scope, self.standalone_instance(function.owner), function.owner)
        bound_self = function.bound_self
        key = (id(node), bound_self.key if bound_self is not None else None,
               bound_self.changes if bound_self.__class__ is Instance else 0,
               tuple([a.key for a in args]), keyword_key(kwargs) if kwargs else ())
        frame = self.frames.get(key)
        if frame is not None:
            return frame
        if key in self.active or self.depth >= MAX_CALL_DEPTH:
            return None
        self.tick(5)
        frame = Frame(self, function.scope, function.node, function.bound_self, standalone=standalone,
                      owner=function.owner)
        frame.caller = (caller, site) if caller is not None else None
        frame.from_call_site = caller.from_call_site if caller is not None else function.owner is None
        frame.bind_arguments(args, kwargs)
        self.contexts[function.node] = self.contexts.get(function.node, 0) + 1
        self.instance_contexts[instance_key] = self.instance_contexts.get(instance_key, 0) + 1
        self.active.add(key)
        self.depth += 1
        try:
            frame.run_function()
        finally:
            self.depth -= 1
            self.active.discard(key)
        self._register(frame, key)
        return frame

    def result_for_caller(self, frame: "Frame | None", args: list[Value], kwargs: dict[str, Value]) -> Value:
        """What the call returns, as its caller sees it.  A call that passed nothing known for a
        parameter shares the run where that parameter is its own symbol (`height`); two such
        calls with different values would then return the same size, and a caller with a
        size of that name would mistake it for its own.  Sizes built from such a symbol are
        unknown to the caller."""
        if frame is None:
            return UNKNOWN
        passed = {v.name for v in (*args, *kwargs.values()) if v.__class__ is Opaque and _named_size(v)}
        borrowed = {name for name, value in frame.params.items()
                    if value.__class__ is Opaque and value.name == name and _named_size(value)} - passed
        return forget_sizes(frame.result, borrowed) if borrowed else frame.result

    # -- imports across files ---------------------------------------------------------
    def foreign_value(self, qualname: str) -> Value | None:
        """A class or function imported from another file of the workspace, if the resolver finds it."""
        if self.resolver is None or "." not in qualname:
            return None
        module, _, name = qualname.rpartition(".")
        if module.split(".")[0] in ("torch", "torchvision", "numpy", "math", "typing", "collections", "dataclasses"):
            return None
        scope = self.foreign.get(module, False)
        if scope is False:
            scope = None
            analysis = self.resolver.analysis_of(module, self.main.analysis.path)
            if analysis is not None:
                scope = ModuleScope(analysis, False)
                self.foreign[module] = scope
                frame = Frame(self, scope, analysis.tree, None, standalone=True, record=False)
                try:
                    frame.run_module()
                except Budget:
                    self.exhausted = True
            else:
                self.foreign[module] = None
        if scope is None:
            return None
        value = scope.globals.get(name)
        return value if isinstance(value, (ClassRef, FunctionRef)) else None


def normalized_arguments(signature: Signature, bound: bool, args: list[Value], kwargs: dict[str, Value]):
    """Arguments nothing is known about become the parameter's own `Opaque`, so that a call
    with them shares the standalone run instead of repeating it."""
    for value in args:
        if value is UNKNOWN or value.__class__ is Opaque:
            break
    else:
        if not kwargs:
            return args, kwargs
        for value in kwargs.values():
            if value is UNKNOWN or value.__class__ is Opaque:
                break
        else:
            return args, kwargs
    # An opaque argument keeps its own name (the caller's symbol: `planes`, not the helper's
    # `out_planes`) when it is a plain size the caller names.
    names = signature.names[1 if bound else 0:]
    fixed = list(args)
    for index, value in enumerate(fixed):
        if index < len(names) and (value is UNKNOWN or value.__class__ is Opaque and not _named_size(value)):
            fixed[index] = Opaque(names[index], Dim.symbol(names[index]))
    named = {k: (Opaque(k, Dim.symbol(k)) if v is UNKNOWN or v.__class__ is Opaque and not _named_size(v) else v)
             for k, v in kwargs.items()}
    return fixed, named


def _renames_sizes(signature: Signature, bound: bool, args: list[Value]) -> bool:
    """Sizes passed by a name other than the parameter's (`conv3x3(inplanes, planes)` into
    `in_planes, out_planes`): the run keeps the caller's names, so the caller's shapes show them."""
    names = signature.names[1 if bound else 0:]
    return any(value.__class__ is Opaque and _named_size(value) and value.name != name
               for value, name in zip(args, names))


def _named_size(value: Opaque) -> bool:
    """A parameter's own opaque value, used as a size: its symbol is its name."""
    return value.dim is not None and value.dim == Dim.symbol(value.name)


def opaque_arguments(names) -> list[Value]:
    """Arguments nothing is known about, one per parameter name: each its own object."""
    return [Opaque(name, Dim.symbol(name)) for name in names]


def keyword_key(kwargs: dict[str, Value]) -> tuple:
    return tuple(sorted((k, v.key) for k, v in kwargs.items())) if kwargs else ()


def _is_dataclass(ref: ClassRef) -> bool:
    for decorator in ref.node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = ref.scope.analysis.qualname(target) or (target.id if isinstance(target, ast.Name) else None)
        if name in DATACLASS_DECORATORS or name == "dataclasses.dataclass":
            return True
    return False


def says_something(bound_self: Value | None, args: list[Value], kwargs: dict[str, Value]) -> bool:
    """Whether a call's arguments tell more about shapes than the function's standalone run
    (a shaped tensor, a known int, a concrete instance); strings, flags and unknowns do not
    get a run of their own."""
    if isinstance(bound_self, Instance) and not bound_self.standalone:
        return True
    return any(_informative(v, 0) for v in (*args, *kwargs.values()))


def _informative(value: Value, depth: int) -> bool:
    if isinstance(value, Tensor):
        return value.has_shape
    if isinstance(value, Int):
        return value.dim is not None
    if isinstance(value, Instance):
        return not value.standalone
    if isinstance(value, (Layer, ClassRef, FunctionRef)):
        return True
    if isinstance(value, LoaderValue):
        return _informative(value.batch, depth + 1)
    if depth < 2 and isinstance(value, TupleValue):
        return any(_informative(v, depth + 1) for v in value.items)
    if depth < 2 and isinstance(value, ListValue):
        return any(_informative(v, depth + 1) for v in value.items[:8]) or _informative(value.element, depth + 1)
    if depth < 2 and isinstance(value, DictValue):
        return any(_informative(v, depth + 1) for v in list(value.items.values())[:8])
    return False

"""Which model classes behave the same in train and eval mode.

`model.eval()` only changes layers that read `self.training`: dropout, batch norm and
the layers built on them.  A model made only of `Linear`, `LSTMCell`, activations, instance
norm without running stats and the like computes the same thing in both modes, so a
missing `eval()` changes nothing (TL103 stays silent) — and inserting one into a function
that goes on to train would be a change waiting to bite.

`mode_independent(analysis, cls)` proves it or answers False: every call in the class
(its constructor and its methods) must be a known mode-independent layer, a torch
function, a builtin, a method call, or a class or function of the project (this file or
an imported workspace file, followed recursively) that is itself mode-independent; its
bases must be `nn.Module` or such classes; nothing may read `self.training`.
Anything unknown (a `timm` block, a factory we cannot see) counts as mode-dependent.
"""
from __future__ import annotations

import ast
import builtins
import sys
from typing import TYPE_CHECKING

from torch_lsp.analysis import construction_of, functions_called, holds_plain_function
from torch_lsp.fact_cache import FactKey
from torch_lsp.roles import ACTIVATION_MODULES, MODEL_WRAPPERS, MODULE_BASES
from torch_lsp.syntax_nodes import walk_nodes
from torch_lsp.workspace_files import project_definition

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis, FunctionInfo

_MODE_DEPENDENT_WORDS = ("Dropout", "BatchNorm", "Transformer", "MultiheadAttention")
_MODE_INDEPENDENT_LAYERS = {
    "Linear", "Bilinear", "LazyLinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
    "ConvTranspose3d", "LSTMCell", "GRUCell", "RNNCell", "Embedding", "EmbeddingBag", "LayerNorm", "GroupNorm",
    "RMSNorm", "Sequential", "ModuleList", "ModuleDict", "Parameter", "ParameterList", "ParameterDict", "Module",
    "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "ZeroPad2d",
    "ConstantPad1d", "ConstantPad2d", "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad2d", "Unfold", "Fold",
} | {name for name in ACTIVATION_MODULES if "Dropout" not in name}
_CONTAINERS = {"Sequential", "ModuleList", "ModuleDict"}
_RECURRENT = {"RNN", "LSTM", "GRU"}  # mode-dependent only with `dropout=`
# Mode-dependent only with `track_running_stats=True` (eval then normalises with running averages).
_INSTANCE_NORMS = {"InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"}
# Calls that move or cast a model and return it: what it is stays what it was built as.
_MOVES = ("to", "cuda", "cpu", "double", "float", "half", "bfloat16", "train")
# Layers of libraries built on PyTorch whose source (the class and its bases) never reads
# `self.training` and takes no sub-module that could (torch_geometric 2.x message passing, and
# its random-walk embedding tables, plain `Embedding`s trained through a loss method).
_MODE_INDEPENDENT_LIBRARY_LAYERS = {
    f"torch_geometric.nn{package}.{layer}" for package in ("", ".conv")
    for layer in ("GCNConv", "SAGEConv", "GraphConv", "ChebConv")
} | {f"torch_geometric.nn{package}.{model}" for package in ("", ".models") for model in ("MetaPath2Vec", "Node2Vec")}
# Opacus' differentially private recurrent layers mirror `nn.RNN`/`nn.LSTM`/`nn.GRU` (the same
# arguments in the same places): mode-dependent only with `dropout=`.
_LIBRARY_RECURRENT = {f"opacus.layers{module}.{layer}" for module in ("", ".dp_rnn")
                      for layer in ("DPRNN", "DPLSTM", "DPGRU")}
_FREE_TORCH_NAMESPACES = ("torch.nn.init.", "torch.nn.utils.", "torch.distributions.")
_MAX_DEPTH = 6

_VERDICTS: FactKey[dict[str, bool]] = FactKey("classes and functions proven mode-independent")


def mode_independent(analysis: "Analysis", node: ast.AST, depth: int = 0) -> bool:
    """A class (or function building layers) whose result behaves the same in train and eval mode."""
    cache = analysis.facts.get_or_compute(_VERDICTS, dict)
    key = f"{getattr(node, 'name', '?')}:{getattr(node, 'lineno', 0)}"
    if key not in cache:
        cache[key] = False  # while being decided (recursion): not proven
        cache[key] = depth < _MAX_DEPTH and _decide(analysis, node, depth)
    return cache[key]


def named_model_is_mode_independent(analysis: "Analysis", function: "FunctionInfo", name: str,
                                    at: ast.AST, depth: int = 0) -> bool:
    """The model `name` holds at `at` in `function` was built mode-independent, followed back
    through moves re-bound to the same name (`model = Net()`, then `model = model.cuda()`)
    and the model wrappers (`DistributedDataParallel(model)`), or through what a factory
    returns (`psnr, ssim = build_metrics()`, see `_factory_result_is_mode_independent`); or it
    is a plain function of the file (`def net(X): ...`), which has no mode at all."""
    if depth >= _MAX_DEPTH:
        return False
    if holds_plain_function(analysis, function, name, at):
        return True
    for _ in range(_MAX_DEPTH):
        built = construction_of(analysis, function, name, at, unwrap=tuple(MODEL_WRAPPERS))
        if built is None:
            return _factory_result_is_mode_independent(analysis, function, name, at, depth)
        if _moved_name(built) != name:
            return constructed_model_is_mode_independent(analysis, built) \
                or _factory_call_is_mode_independent(analysis, built, depth)
        at = analysis.statement_of(built)  # `model = model.cuda()`: what `model` was before
    return False


def _factory_call_is_mode_independent(analysis: "Analysis", built: ast.AST, depth: int) -> bool:
    """`net = get_net(n)`, also as what every caller passes for a parameter: a factory of the
    project whose every `return` hands back a model proven mode-independent."""
    value = _unmoved(built)
    if not isinstance(value, ast.Call):
        return False
    factories = functions_called(analysis, value)
    return bool(factories) and all(_returns_mode_independent(owner, factory, None, depth) for owner, factory in factories)


def _factory_result_is_mode_independent(analysis: "Analysis", function: "FunctionInfo", name: str,
                                        at: ast.AST, depth: int) -> bool:
    """`name` is bound from a factory's result, `model = build()` or one place of a tuple,
    `psnr, ssim = build_metrics(...)`, where the factory is a function of the file or one
    imported from a project file whose every `return` hands back, at that place, a model
    proven mode-independent in its own file (an image-quality metric of fixed arithmetic).
    A parameter counts when every caller in the file passes such a name, or builds such a
    model in place (`train(nn.Linear(30, 1))`)."""
    roles = analysis.roles_for(function)
    assignment = roles.last_assignment(name, at)
    if assignment is None and name in function.params and not function.is_module:
        sites = analysis.callers(function)
        return bool(sites) and all(
            _passed_model_is_mode_independent(analysis, site, analysis.argument_for(site, function, name), depth)
            for site in sites)
    if assignment is None or not isinstance(assignment.statement, ast.Assign) \
            or not isinstance(assignment.value, ast.Call) or len(assignment.statement.targets) != 1:
        return False
    place = None
    if assignment.unpacked:
        target = assignment.statement.targets[0]
        if not (isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts)):
            return False
        place = [e.id for e in target.elts].index(name)
    private = _made_private(analysis, function, assignment.value) if place == 0 else None
    if isinstance(private, ast.Name):  # Opacus' wrapper runs the module it was given
        return named_model_is_mode_independent(analysis, function, private.id, assignment.statement, depth + 1)
    if private is not None:
        return constructed_model_is_mode_independent(analysis, private)
    factories = functions_called(analysis, assignment.value)
    return bool(factories) and all(
        _returns_mode_independent(owner, factory, place, depth) for owner, factory in factories)


def _passed_model_is_mode_independent(analysis: "Analysis", site: ast.Call, passed: ast.AST | None,
                                      depth: int) -> bool:
    """What a caller passes for a model parameter: a name holding a mode-independent model, or
    one built in place (`train(nn.Linear(30, 1))`, `train(DigitNet())`)."""
    if isinstance(passed, ast.Name):
        return named_model_is_mode_independent(analysis, analysis.context(site).function, passed.id, site, depth + 1)
    return passed is not None and constructed_model_is_mode_independent(analysis, passed)


_OPACUS_ENGINES = {"opacus.PrivacyEngine", "opacus.privacy_engine.PrivacyEngine"}


def _made_private(analysis: "Analysis", function: "FunctionInfo", call: ast.Call) -> ast.AST | None:
    """`model, optimizer, loader = privacy_engine.make_private(module=model, ...)` (or
    `make_private_with_epsilon`) on an Opacus `PrivacyEngine`: the model it hands back first
    is a `GradSampleModule` that runs the `module=` it was given, which this returns."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr in ("make_private", "make_private_with_epsilon")
            and isinstance(func.value, ast.Name)):
        return None
    engine = construction_of(analysis, function, func.value.id, call)
    if not (isinstance(engine, ast.Call) and analysis.call_qualname(engine) in _OPACUS_ENGINES):
        return None
    return next((kw.value for kw in call.keywords if kw.arg == "module"), None)


def _returns_mode_independent(analysis: "Analysis", factory: "FunctionInfo", place: int | None, depth: int) -> bool:
    returns = _own_returns(factory.node)
    if not returns:
        return False
    for ret in returns:
        value = ret.value
        if place is not None:
            if not (isinstance(value, ast.Tuple) and len(value.elts) > place):
                return False
            value = value.elts[place]
        if isinstance(value, ast.Name):
            if not named_model_is_mode_independent(analysis, factory, value.id, ret, depth + 1):
                return False
        elif not constructed_model_is_mode_independent(analysis, value):
            return False
    return True


def _own_returns(function: ast.AST) -> list[ast.Return]:
    """The `return` statements of `function` itself, not those of the functions and classes
    defined in its body (a factory that defines its model class inside, `def get_model():
    class Net(nn.Module): ... def forward(self, x): return ...`, then `return model, loss_fn,
    optimizer`: the `forward`'s return is no result of the factory)."""
    nested = [n for n in walk_nodes(function) if n is not function
              and isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda))]
    theirs = {id(r) for inner in nested for r in walk_nodes(inner) if isinstance(r, ast.Return)}
    return [r for r in walk_nodes(function) if isinstance(r, ast.Return) and id(r) not in theirs]


def _moved_name(value: ast.AST) -> str | None:
    """`model` in `model.cuda()` / `model.to(device).float()`: the name a device or dtype move starts from."""
    value = _unmoved(value)
    return value.id if isinstance(value, ast.Name) else None


def _unmoved(value: ast.AST | None) -> ast.AST | None:
    """What a chain of device or dtype moves starts from: `Net()` in `Net().to(device).float()`."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _MOVES:
        value = value.func.value
    return value


def constructed_model_is_mode_independent(analysis: "Analysis", value: ast.AST) -> bool:
    """`Net(...)` of a project class proven mode-independent, or a torch layer built in place
    (`nn.Linear(d, k)`, `nn.Sequential(nn.Linear(...), nn.ReLU())`), through `.to(...)`-style chains."""
    value = _unmoved(value)
    if not isinstance(value, ast.Call):
        return False
    qualname = analysis.qualname(value.func) or ""
    if qualname.startswith("torch.nn."):
        return _built_layer_is_mode_independent(analysis, value)
    if qualname in _MODE_INDEPENDENT_LIBRARY_LAYERS:  # `model = Node2Vec(edge_index, ...)`
        return True
    found = project_definition(analysis, value.func)
    if found is None or not isinstance(found[1], ast.ClassDef):
        return False
    owner, cls = found
    return mode_independent(owner, cls) or _dropout_disabled(owner, cls, value)


_DROPOUT_LAYERS = {"Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"}


def _dropout_disabled(analysis: "Analysis", cls: ast.ClassDef, built: ast.Call) -> bool:
    """`CausalAttention(d_in, d_out, context_length, 0.0)`: a class whose only train/eval
    layers are `nn.Dropout(rate)` with `rate` an `__init__` parameter this construction passes
    as a literal 0, and nothing else mode-dependent: dropout of rate 0 is the identity, so
    `eval()` changes nothing for this model."""
    init = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
    if init is None or any(isinstance(a, ast.Starred) for a in built.args) or \
            any(kw.arg is None for kw in built.keywords):
        return False
    params = [a.arg for a in init.args.posonlyargs + init.args.args][1:]  # after `self`
    passed = dict(zip(params, built.args)) | {kw.arg: kw.value for kw in built.keywords}
    rebound = {n.id for n in walk_nodes(init) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    zero = {name for name, value in passed.items() if isinstance(value, ast.Constant)
            and type(value.value) in (int, float) and value.value == 0 and name not in rebound}
    if not zero or not all(_module_base(analysis, base, 0) for base in cls.bases):
        return False
    for inner in walk_nodes(cls):
        if isinstance(inner, ast.Attribute) and inner.attr == "training":
            return False
        if isinstance(inner, ast.Call) and not _idle_dropout(analysis, inner, zero) \
                and not _call_is_mode_independent(analysis, inner, 0):
            return False
    return True


def _idle_dropout(analysis: "Analysis", call: ast.Call, zero: set[str]) -> bool:
    """`nn.Dropout(rate)` (or `p=rate`) with `rate` one of the parameters passed as 0."""
    qualname = analysis.qualname(call.func) or ""
    if not (qualname.startswith("torch.nn.") and qualname.rsplit(".", 1)[1] in _DROPOUT_LAYERS):
        return False
    rate = call.args[0] if call.args else next((kw.value for kw in call.keywords if kw.arg == "p"), None)
    return isinstance(rate, ast.Name) and rate.id in zero


def _built_layer_is_mode_independent(analysis: "Analysis", call: ast.Call) -> bool:
    """A torch layer constructed in place; a container's layers must all be constructed in
    its arguments too (`nn.Sequential(*blocks)` hides what it holds)."""
    qualname = analysis.qualname(call.func) or ""
    if not qualname.startswith("torch.nn.") or not _named_call_is_mode_independent(analysis, call, qualname, 0):
        return False
    if qualname.rsplit(".", 1)[1] not in _CONTAINERS:
        return True
    layers: list[ast.AST] = []
    for arg in [*call.args, *(kw.value for kw in call.keywords)]:
        layers.extend(arg.elts if isinstance(arg, (ast.List, ast.Tuple)) else [arg])
    return all(isinstance(layer, ast.Call) and _built_layer_is_mode_independent(analysis, layer) for layer in layers)


def attribute_is_mode_independent(analysis: "Analysis", cls: ast.ClassDef, attr: str, depth: int = 0) -> bool:
    """`self.<attr>` of a plain class is only ever bound to modules proven mode-independent:
    `self.blur = nn.Sequential(nn.ReflectionPad2d(r), self.conv_h, self.conv_v)`, with
    `self.conv_h = nn.Conv2d(...)`.  A layer's own arguments are configuration; a
    container's are the layers it holds, and each must be proven too."""
    from torch_lsp.roles import self_attribute_values

    values = self_attribute_values(analysis, cls).get(attr, [])
    return depth < _MAX_DEPTH and bool(values) and all(_built_mode_independent(analysis, cls, v, depth) for v in values)


def _built_mode_independent(analysis: "Analysis", cls: ast.ClassDef, value: ast.AST | None, depth: int) -> bool:
    value = _unmoved(value)  # `self.policy = Policy().to(device)` is what `Policy()` built
    if isinstance(value, (ast.List, ast.Tuple)):
        return all(_built_mode_independent(analysis, cls, element, depth) for element in value.elts)
    if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id == "self":
        return attribute_is_mode_independent(analysis, cls, value.attr, depth + 1)
    if not isinstance(value, ast.Call):
        return False
    qualname = analysis.qualname(value.func) or ""
    if qualname.startswith("torch.nn.") and qualname.count(".") == 2 and qualname.rsplit(".", 1)[1] in _CONTAINERS:
        held = list(value.args) + [kw.value for kw in value.keywords]
        return all(_built_mode_independent(analysis, cls, layer, depth) for layer in held)
    if qualname:
        return _named_call_is_mode_independent(analysis, value, qualname, depth)
    return isinstance(value.func, ast.Name) and _call_is_mode_independent(analysis, value, depth)


def _decide(analysis: "Analysis", node: ast.AST, depth: int) -> bool:
    if isinstance(node, ast.ClassDef) and not all(_module_base(analysis, base, depth) for base in node.bases):
        return False
    for inner in walk_nodes(node):
        if isinstance(inner, ast.Attribute) and inner.attr == "training":
            return False
        if isinstance(inner, ast.Call) and not _call_is_mode_independent(analysis, inner, depth):
            return False
    return True


def _module_base(analysis: "Analysis", base: ast.AST, depth: int) -> bool:
    qualname = analysis.qualname(base) or _aliased_qualname(analysis, base)
    if (qualname in MODULE_BASES and "Lightning" not in qualname) or qualname == "torch.jit.ScriptModule":
        return True
    found = project_definition(analysis, base)
    return found is not None and isinstance(found[1], ast.ClassDef) and mode_independent(found[0], found[1], depth + 1)


def _statement_apart_from_self(analysis: "Analysis", call: ast.Call) -> bool:
    """A call that is a statement of its own (its result unused) of a function, not a method,
    given nothing of `self`: it cannot build a layer the model holds or change how one behaves
    (a logging or bookkeeping call of another library)."""
    if not isinstance(analysis.parents.get(call), ast.Expr) or not isinstance(call.func, (ast.Name, ast.Attribute)):
        return False
    root = call.func
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name) or root.id == "self" or root.id not in analysis.imports:
        return False  # a method of a value, or a function of the file: judged as before
    return not any(isinstance(node, ast.Name) and node.id == "self"
                   for arg in (*call.args, *(k.value for k in call.keywords)) for node in walk_nodes(arg))


def _aliased_qualname(analysis: "Analysis", base: ast.AST) -> str:
    """`MyModule = torch.jit.ScriptModule` then `class Block(MyModule):` (RWKV): the one value the
    file binds to the name, when it names a torch class."""
    values = analysis.assigned_values.get(base.id, []) if isinstance(base, ast.Name) else []
    if len(values) == 1 and isinstance(values[0], (ast.Name, ast.Attribute)):
        return analysis.qualname(values[0]) or ""
    return ""


def _call_is_mode_independent(analysis: "Analysis", call: ast.Call, depth: int) -> bool:
    func = call.func
    if _statement_apart_from_self(analysis, call):
        return True  # `mlperf_log.ncf_print(key=..., value=...)` in `__init__`: a log line, no layer
    qualname = analysis.qualname(func)
    if qualname is not None:
        return _named_call_is_mode_independent(analysis, call, qualname, depth)
    if isinstance(func, ast.Attribute):
        return True  # a method: `self.lstm(x)`, `x.view(...)`, `super().__init__()`; layers are judged where built
    if isinstance(func, ast.Name):
        if func.id in dir(builtins) or _submodule_of_self(analysis, call, func.id):
            return True
        found = project_definition(analysis, func)
        if found is None:
            # Defined once per branch (`if use_cuda_kernel: def op(...)` / `else: def op(...)`):
            # whichever runs, each must be proven.
            functions = [f for f in analysis.function_named(func.id) if not f.is_method]
            return len(functions) > 1 and all(mode_independent(analysis, f.node, depth + 1) for f in functions)
        return mode_independent(found[0], found[1], depth + 1)
    if isinstance(func, ast.Call) and isinstance(func.func, ast.Name):
        # `_to_tuple(2)(size)`: a closure that a project function proven here builds and returns.
        found = project_definition(analysis, func.func)
        return found is not None and _returns_own_closure(found[1]) \
            and _call_is_mode_independent(analysis, func, depth)
    return False


def _submodule_of_self(analysis: "Analysis", call: ast.Call, name: str) -> bool:
    """`for block in self.blocks: x = block(x)` (also over `enumerate(self.blocks)` or
    `self.heads.values()`): `name` is one of the class's own sub-modules, which, like
    `self.head(x)`, are judged where the class builds them."""
    function = analysis.context(call).function
    for node in walk_nodes(function.node):
        if isinstance(node, (ast.For, ast.comprehension)) and _names_bound(node.target, name) \
                and _over_self_attribute(node.iter):
            return True
    return False


def _names_bound(target: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in walk_nodes(target))


def _over_self_attribute(iterable: ast.AST) -> bool:
    """`self.blocks`, `enumerate(self.blocks)`, `self.heads.values()`, `zip(self.a, self.b)`."""
    if isinstance(iterable, ast.Call):
        if isinstance(iterable.func, ast.Name) and iterable.func.id in ("enumerate", "zip", "reversed"):
            return bool(iterable.args) and all(_over_self_attribute(a) for a in iterable.args)
        if isinstance(iterable.func, ast.Attribute) and iterable.func.attr in ("values", "children") \
                and not iterable.args:
            return _over_self_attribute(iterable.func.value)
        return False
    return isinstance(iterable, ast.Attribute) and isinstance(iterable.value, ast.Name) \
        and iterable.value.id == "self"


def _returns_own_closure(node: ast.AST) -> bool:
    """Every `return` of the function hands back a function defined in its own body
    (`def parse(x): ...; return parse`): what calling its result runs was proven with it."""
    if not isinstance(node, ast.FunctionDef):
        return False
    nested = [n for n in node.body if isinstance(n, ast.FunctionDef)]
    theirs = {id(r) for f in nested for r in walk_nodes(f) if isinstance(r, ast.Return)}
    own = [r for r in walk_nodes(node) if isinstance(r, ast.Return) and id(r) not in theirs]
    return bool(own) and all(isinstance(r.value, ast.Name) and r.value.id in {f.name for f in nested} for r in own)


def _named_call_is_mode_independent(analysis: "Analysis", call: ast.Call, qualname: str, depth: int) -> bool:
    if qualname.startswith(_FREE_TORCH_NAMESPACES) or qualname in _MODE_INDEPENDENT_LIBRARY_LAYERS:
        return True
    if qualname.startswith("torch.nn.functional."):
        return "dropout" not in qualname
    if qualname in _LIBRARY_RECURRENT:
        return _recurrent_without_dropout(call)
    if qualname.startswith("torch.nn.") and qualname.count(".") == 2:
        layer = qualname.rsplit(".", 1)[1]
        if layer in _RECURRENT:
            return _recurrent_without_dropout(call)
        if layer in _INSTANCE_NORMS:
            return _keeps_no_running_stats(call)
        if any(word in layer for word in _MODE_DEPENDENT_WORDS):
            return False
        return layer in _MODE_INDEPENDENT_LAYERS or layer.endswith("Loss")
    root = qualname.split(".")[0]
    if root == "torch":
        return not qualname.startswith("torch.nn.")  # tensor functions; other nn classes: unknown
    if root in sys.stdlib_module_names or root in ("numpy", "math"):
        return True
    found = project_definition(analysis, call.func)
    return found is not None and mode_independent(found[0], found[1], depth + 1)


def _recurrent_without_dropout(call: ast.Call) -> bool:
    """`nn.LSTM(d, h, batch_first=True)`: no `dropout=`, neither by keyword nor in its place
    (the sixth argument), so train and eval mode compute the same."""
    return not any(kw.arg == "dropout" for kw in call.keywords) and len(call.args) < 6


def _keeps_no_running_stats(call: ast.Call) -> bool:
    """`nn.InstanceNorm2d(c)` or `nn.InstanceNorm2d(c, affine=True, track_running_stats=False)`:
    it normalises with the statistics of each input in both modes.  An argument we cannot read
    (`track_running_stats=flag`, positional or `**kwargs`) is not proven."""
    if len(call.args) > 4:
        return False
    for kw in call.keywords:
        if kw.arg is None or (kw.arg == "track_running_stats"
                              and not (isinstance(kw.value, ast.Constant) and kw.value.value is False)):
            return False
    return True


"""What each local name *is* in PyTorch terms, per function scope.

Evidence, strongest first: what the name was assigned from (`torch.optim.AdamW(...)`,
a local `nn.Module` subclass, `nn.CrossEntropyLoss()`), what is done with it in the
same scope (`m.eval()`, `m.parameters()`, `opt.step()` next to `.backward()`), and the
names people conventionally use (`model`, `optimizer`, `criterion`, `scheduler`).
A name with no evidence has no role: rules stay silent about it.

Value facts (`carries_graph`, `is_tensor`) follow assignments in statement order
inside one function; anything not understood is "not known", never a guess.
"""
from __future__ import annotations

import ast
import re
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from torch_lsp.fact_cache import FactKey
from torch_lsp.syntax_nodes import call_name, is_self_attribute, keyword, receiver, walk_nodes

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis, FunctionInfo

_MODEL_WORDS = (
    "model|net|network|encoder|decoder|backbone|generator|discriminator|teacher|student|classifier"
    "|autoencoder|vae|seq2seq|unet|transformer|detector|denoiser|regressor|embedder|tagger|gnn|gcn"
)
# A name that starts with a verb names what is done to a model (`run_model`, `load_model`:
# a callback or a loader), not the model.
_VERB_FIRST = (
    "run|get|load|build|make|create|init|initialize|call|apply|wrap|prepare|setup|save|export|compute|fetch"
    "|construct|instantiate|evaluate|validate|predict|forward"
)
# A last word that names something about an object, not the object: `model_fn`, `model_config`,
# `model_path`, `model_cls`, `optimizer_state`, `optimizer_data` (what is saved of it).
_ABOUT_SUFFIX = (
    "config|cfg|conf|args|kwargs|params|name|names|path|paths|dir|file|url"
    "|id|type|kind|class|cls|factory|builder|fn|func|function|state|dict|info|spec|version|size|data"
)
# ... and for a model, also its pre- and post-processing and its inputs: `model_transform` (a
# tokenizer), `model_inputs`.
_NOT_MODEL_SUFFIX = f"transforms?|tokenizer|processor|preprocess|inputs?|outputs?|{_ABOUT_SUFFIX}"
MODEL_NAME = re.compile(
    rf"^(?!(?:{_VERB_FIRST})_)(?:[a-z0-9]+_)*(?:{_MODEL_WORDS})(?:_(?!(?:{_NOT_MODEL_SUFFIX})$)[a-z0-9]+)?$"
    r"|^net[A-Z]\w*$", re.IGNORECASE)
# `optimizerD`, `optG`: the DCGAN tutorial's CamelCase suffix names one optimizer per network (case
# matters there, or `options` and `optimum` would be optimizers too).
OPTIMIZER_NAME = re.compile(
    rf"^(?:[a-z0-9]+_)*(?:opt|optim|optimizer|optimiser)s?(?:_(?!(?:{_ABOUT_SUFFIX})$)[a-z0-9]+)?$"
    r"|^(?-i:(?:opt|optim|optimizer|optimiser)[A-Z][A-Za-z0-9]*)$", re.IGNORECASE)
SCHEDULER_NAME = re.compile(
    rf"^(?:[a-z0-9]+_)*(?:sched|scheduler|schedule|lr_scheduler)s?(?:_(?!(?:{_ABOUT_SUFFIX})$)[a-z0-9]+)?$", re.IGNORECASE)
LOSS_MODULE_NAME = re.compile(r"^(?:[a-z0-9]+_)*(?:criterion|criteria|loss_fn|loss_func|lossfn|loss_function|loss_module)(?:_[a-z0-9]+)?$", re.IGNORECASE)
# An entry named for a metric counted from predictions (`"accuracy"`, `"top1_acc"`, `"num_correct"`):
# compared predictions (`pred == y`, `argmax`) record no autograd graph, so whatever tensor or
# number the entry holds carries none.  (`"accum_loss"` is no such name.)
COUNTED_METRIC = re.compile(r"(?:^|_)(?:acc(?:uracy)?|(?:num_|n_)?correct)(?:$|_|\d)", re.IGNORECASE)
LOSS_VALUE_NAME = re.compile(r"(?:^|_)loss(?:es)?(?:$|_)|^loss", re.IGNORECASE)
SCALER_NAME = re.compile(r"(?:^|_)scaler$", re.IGNORECASE)
DEVICE_NAME = re.compile(r"^(?:[a-z0-9]+_)*(?:device|dev)$", re.IGNORECASE)

MODULE_BASES = {
    "torch.nn.Module",
    "torch.nn.modules.module.Module",
    "torch.nn.Sequential",
    "pytorch_lightning.LightningModule",
    "lightning.LightningModule",
    "lightning.pytorch.LightningModule",
}
MODEL_WRAPPERS = {
    "torch.nn.DataParallel",
    "torch.nn.parallel.DataParallel",
    "torch.nn.parallel.DistributedDataParallel",
    "torch.compile",
    "torch.jit.script",
    "torch.distributed.fsdp.FullyShardedDataParallel",
}
# Parameter-free modules that are functions, not models: activations, dropout, reshaping, and
# the distance modules (`nn.CosineSimilarity()(a, b)` computes a similarity, as `F.cosine_similarity`).
ACTIVATION_MODULES = {
    "ReLU", "ReLU6", "LeakyReLU", "PReLU", "RReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish",
    "Sigmoid", "Tanh", "Softmax", "Softmin", "LogSoftmax", "Softmax2d", "Softplus", "Softsign",
    "Hardtanh", "Hardswish", "Hardsigmoid", "Tanhshrink", "Softshrink", "Hardshrink", "LogSigmoid",
    "Threshold", "GLU", "Identity", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
    "Flatten", "Unflatten", "Upsample", "PixelShuffle", "PixelUnshuffle", "CosineSimilarity", "PairwiseDistance",
}
NOT_CALLABLE_MODULES = {"ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "Parameter", "Buffer"}
FUNCTIONAL_LOSSES = {
    "cross_entropy", "binary_cross_entropy", "binary_cross_entropy_with_logits", "nll_loss", "mse_loss",
    "l1_loss", "smooth_l1_loss", "huber_loss", "kl_div", "poisson_nll_loss", "gaussian_nll_loss",
    "ctc_loss", "margin_ranking_loss", "hinge_embedding_loss", "multilabel_margin_loss",
    "multilabel_soft_margin_loss", "multi_margin_loss", "soft_margin_loss", "cosine_embedding_loss",
    "triplet_margin_loss", "triplet_margin_with_distance_loss",
}
OPTIMIZER_CLASSES = {
    "SGD", "Adam", "AdamW", "Adamax", "Adagrad", "Adadelta", "RMSprop", "Rprop", "NAdam", "RAdam",
    "LBFGS", "SparseAdam", "ASGD", "Lion", "LAMB", "Lamb", "Adafactor", "AdamW8bit", "Adam8bit", "Muon",
}
# Tensor methods and torch functions that keep the autograd graph of their input.
GRAPH_PRESERVING_METHODS = {
    "mean", "sum", "float", "double", "half", "bfloat16", "cpu", "cuda", "to", "view", "reshape",
    "squeeze", "unsqueeze", "flatten", "clone", "abs", "pow", "exp", "log", "sqrt", "sigmoid", "tanh",
    "relu", "softmax", "log_softmax", "transpose", "permute", "contiguous", "mul", "add", "sub", "div",
    "neg", "norm", "prod", "expand", "repeat", "clamp", "t", "type_as", "squeeze_", "unsqueeze_",
}
GRAPH_PRESERVING_FUNCTIONS = {
    "sigmoid", "softmax", "log_softmax", "tanh", "relu", "exp", "log", "mean", "sum", "stack", "cat",
    "abs", "clamp", "matmul", "bmm", "mm", "einsum", "gelu", "silu", "normalize", "linear",
}
GRAPH_DROPPING_METHODS = {"detach", "item", "tolist", "numpy", "argmax", "argmin", "detach_", "long", "int", "bool"}


@dataclass(eq=False)
class Assignment:
    name: str
    statement: ast.stmt
    order: int  # position of the statement in the function's statement list
    value: ast.AST | None  # None when the value is not an expression we can read (for targets…)
    unpacked: bool = False  # target was one element of a tuple


@dataclass(eq=False)
class ScopeRoles:
    """Roles of names inside one function (module-level roles are the fallback).

    It reaches its `Analysis` through a weak reference: the analysis owns its roles, and a
    strong reference back would make every analysed version a reference cycle, freed only
    by a full garbage collection instead of as soon as the server drops the version."""

    analysis_ref: "weakref.ref[Analysis]"
    function: "FunctionInfo"
    parent: "ScopeRoles | None" = None
    models: set[str] = field(default_factory=set)
    optimizers: set[str] = field(default_factory=set)
    schedulers: set[str] = field(default_factory=set)
    scalers: set[str] = field(default_factory=set)
    loss_modules: set[str] = field(default_factory=set)
    activation_modules: set[str] = field(default_factory=set)
    devices: set[str] = field(default_factory=set)
    assignments: dict[str, list[Assignment]] = field(default_factory=dict)
    statement_order: dict[ast.stmt, int] = field(default_factory=dict)
    loop_targets: set[str] = field(default_factory=set)
    # The assignments (by id) that bind a graph-carrying tensor: kept here, not on the
    # assignments, which a later version of the file may share (`_RoleSeed`).
    graph_assignments: set[int] = field(default_factory=set)
    # Facts of the function's own nodes read against what its seed's key holds (the imports),
    # computed on first use and shared by the versions that share the seed (`_RoleSeed`).
    kept: dict[str, object] = field(default_factory=dict)

    _value_facts_done: bool = False

    @property
    def analysis(self) -> "Analysis":
        return self.analysis_ref()

    def _ensure_value_facts(self) -> None:
        """Graph facts are computed on first use: only the training-loop rules need them."""
        if not self._value_facts_done:
            self._value_facts_done = True
            _value_facts(self)

    # ---------------------------------------------------------------- lookups
    def _role(self, attr: str, name: str) -> bool:
        if name in getattr(self, attr):
            return True
        if self.parent is not None and name not in self.assignments and name not in self.function.params:
            return self.parent._role(attr, name)
        return False

    def is_model(self, name: str) -> bool:
        return self._role("models", name) and not self.is_loss_module(name)

    def is_optimizer(self, name: str) -> bool:
        return self._role("optimizers", name)

    def is_scheduler(self, name: str) -> bool:
        return self._role("schedulers", name)

    def is_loss_module(self, name: str) -> bool:
        return self._role("loss_modules", name) or self._role("activation_modules", name)

    def is_criterion(self, name: str) -> bool:
        """A loss module proper (`nn.CrossEntropyLoss()`), not an activation module."""
        return self._role("loss_modules", name)

    def is_device(self, name: str) -> bool:
        return self._role("devices", name)

    def is_scaler(self, name: str) -> bool:
        return self._role("scalers", name)

    # ------------------------------------------------------------ call kinds
    def model_name(self, call: ast.Call) -> str | None:
        """The model's name when `call` runs a model: `model(x)` or `model.forward(x)`."""
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr == "forward":
            func = func.value
        if isinstance(func, ast.Attribute) and func.attr == "module":
            func = func.value  # `model.module(x)`: the network a DDP/DataParallel wrapper holds
        if isinstance(func, ast.Name) and self.is_model(func.id):
            return func.id
        return None

    def is_optimizer_step(self, call: ast.Call) -> bool:
        name = call_name(call)
        target = receiver(call)
        if name == "optimizer_step":  # torch_xla's xm.optimizer_step(opt)
            return True
        if name != "step" or target is None:
            return False
        if self._names_optimizer(target):
            return True
        # scaler.step(optimizer)
        if call.args and self._names_optimizer(call.args[0]):
            return self._names_scaler(target)
        return False

    def is_scheduler_step(self, call: ast.Call) -> bool:
        target = receiver(call)
        if call_name(call) != "step" or target is None:
            return False
        if isinstance(target, ast.Name):
            return self.is_scheduler(target.id)
        return isinstance(target, ast.Attribute) and bool(SCHEDULER_NAME.match(target.attr))

    def _names_optimizer(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Name):
            return self.is_optimizer(node.id) and not self.is_scheduler(node.id)
        if isinstance(node, ast.Attribute):
            return bool(OPTIMIZER_NAME.match(node.attr)) and not SCHEDULER_NAME.match(node.attr)
        return False

    def _names_scaler(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Name):
            return self.is_scaler(node.id)
        return isinstance(node, ast.Attribute) and bool(SCALER_NAME.search(node.attr))

    def is_loss_call(self, call: ast.Call) -> bool:
        qualname = self.analysis.call_qualname(call) or ""
        if qualname.startswith("torch.nn.functional.") and qualname.rsplit(".", 1)[1] in FUNCTIONAL_LOSSES:
            return True
        func = call.func
        if isinstance(func, ast.Name):
            return self.is_criterion(func.id)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            return bool(LOSS_MODULE_NAME.match(func.attr)) or func.attr in self.analysis_self_loss_attrs()
        return False

    def analysis_self_loss_attrs(self) -> set[str]:
        cls = self.function.class_node
        if cls is None:
            return set()
        return self.analysis_class_attrs(cls)["loss"]

    def analysis_class_attrs(self, cls: ast.ClassDef) -> dict[str, set[str]]:
        return class_attribute_roles(self.analysis, cls)

    # ----------------------------------------------------------- value facts
    def last_assignment(self, name: str, before: ast.AST) -> Assignment | None:
        order = self.order_of(before)
        best = None
        for assignment in self.assignments.get(name, ()):
            if assignment.order < order:
                best = assignment
        return best

    def order_of(self, node: ast.AST) -> int:
        stmt = self.analysis.statement_of(node)
        return self.statement_order.get(stmt, 1 << 30)

    def carries_graph(self, expr: ast.AST, at: ast.AST | None = None) -> bool:
        """True when `expr` is known to hold a tensor attached to the autograd graph."""
        at = at or expr
        if self.analysis.context(at).grad_disabled:
            return False
        return self._graph(expr, at, 0)

    def _graph(self, expr: ast.AST, at: ast.AST, depth: int) -> bool:
        if depth > 12:
            return False
        if isinstance(expr, ast.Name):
            assignment = self.last_assignment(expr.id, at)
            if assignment is None:
                return False
            self._ensure_value_facts()
            return id(assignment) in self.graph_assignments
        if isinstance(expr, ast.Call):
            if self.model_name(expr) or self.is_loss_call(expr):
                return True
            name = call_name(expr)
            if isinstance(expr.func, ast.Attribute):
                qualname = self.analysis.call_qualname(expr)
                if qualname and qualname.split(".")[0] == "torch":
                    if name in GRAPH_PRESERVING_FUNCTIONS:
                        return any(
                            self._graph(a, at, depth + 1) or (name in ("cat", "stack") and self._graph_list(a, depth))
                            for a in _tensor_args(expr)
                        )
                    return False
                if name in GRAPH_DROPPING_METHODS:
                    return False
                if name in GRAPH_PRESERVING_METHODS:
                    return self._graph(expr.func.value, at, depth + 1)
            return False
        if isinstance(expr, ast.BinOp):
            return self._graph(expr.left, at, depth + 1) or self._graph(expr.right, at, depth + 1)
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
            return self._graph(expr.operand, at, depth + 1)
        if isinstance(expr, ast.Subscript):
            key = expr.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str) and COUNTED_METRIC.search(key.value):
                return False  # `metrics["accuracy"]`: counted from comparisons, which record no graph
            return self._graph(expr.value, at, depth + 1)
        if isinstance(expr, ast.Attribute) and expr.attr in ("T", "mT"):
            return self._graph(expr.value, at, depth + 1)
        return False

    def _graph_list(self, expr: ast.AST, depth: int) -> bool:
        """`torch.cat(values)` where this function fills the list `values` with graph-carrying
        tensors (`values.append(critic(state))` with grad on): the joined tensor carries them too."""
        if not isinstance(expr, ast.Name):
            return False
        for call in self.function.calls:
            func = call.func
            if (isinstance(func, ast.Attribute) and func.attr == "append" and isinstance(func.value, ast.Name)
                    and func.value.id == expr.id and len(call.args) == 1 and not call.keywords
                    and not self.analysis.context(call).grad_disabled
                    and self._graph(call.args[0], call, depth + 1)):
                return True
        return False

    def is_loss_value(self, expr: ast.AST, at: ast.AST | None = None) -> bool:
        """A loss tensor: a loss call's result, or a name bound to one (or `.backward()`-ed)."""
        at = at or expr
        if isinstance(expr, ast.Call):
            return self.is_loss_call(expr)
        if isinstance(expr, ast.Name):
            return expr.id in self.backpropagated or (
                bool(LOSS_VALUE_NAME.search(expr.id)) and self.carries_graph(expr, at)
            )
        return False

    @property
    def backpropagated(self) -> set[str]:
        """Names on which `.backward()` is called in this function."""
        cached = getattr(self, "_backpropagated", None)
        if cached is None:
            cached = {name for name, _ in self.backward_targets()}
            self._backpropagated = cached
        return cached

    def backward_targets(self) -> list[tuple[str, ast.Call]]:
        """(name, `.backward()` call) for each backward on a name: `loss.backward()`,
        `scaler.scale(loss).backward()`, `(loss / accum).backward()`."""
        found = []
        for call in self.function.calls:
            func = call.func
            if isinstance(func, ast.Attribute) and func.attr == "backward":
                base = func.value
                while isinstance(base, ast.Call) and isinstance(base.func, ast.Attribute):
                    base = base.args[0] if base.func.attr == "scale" and base.args else base.func.value
                if isinstance(base, ast.BinOp):
                    base = base.left
                if isinstance(base, ast.Name):
                    found.append((base.id, call))
        return found


# ------------------------------------------------------------------ compute
def compute_roles(analysis: "Analysis") -> dict:
    module_roles = _scope_roles(analysis, analysis.module_scope, None)
    table = {analysis.module_scope: module_roles}
    seeds = analysis.statement_facts.each(_ROLE_SEEDS, lambda statement: {})
    key = classification_facts(analysis)
    functions = iter(analysis.functions[1:])  # the module scope is first
    for statement_seeds, count in zip(seeds, analysis.functions_per_statement):
        for _ in range(count):
            function = next(functions)
            kept = statement_seeds.get(id(function.node), ())
            seed = next((seed for seed in kept if seed.key is key or seed.key == key), None)
            if seed is None:
                seed = _RoleSeed(key, _scope_roles(analysis, function, None))
                # The newest two: the whole file's and one part's (`rule_parts` analyses a
                # part of the file on its own, with the part's classes and imports).
                statement_seeds[id(function.node)] = (seed, *kept[:1])
            table[function] = seed.roles_for(analysis, function, module_roles)
    return table


def _scope_roles(analysis: "Analysis", function: "FunctionInfo", parent: ScopeRoles | None) -> ScopeRoles:
    roles = ScopeRoles(weakref.ref(analysis), function, parent)
    _name_roles(analysis, roles)
    for param in function.params:
        _classify_by_name(roles, param)
    _evidence_from_use(analysis, roles)
    return roles


def classification_facts(analysis: "Analysis") -> tuple:
    """What classifying a value (`constructed_kind`) and a function's roles read beyond their
    own nodes: what the imports bind, the file's classes, and which of them are modules."""
    return (tuple(analysis.imports.items()), tuple(analysis.classes), tuple(local_module_classes(analysis)))


@dataclass(frozen=True)
class _RoleSeed:
    """The roles one function's own nodes give (`_scope_roles`), for the file-wide facts in
    `key`: kept with the top-level statement that holds the function, so that a later
    version sharing the statement, with the same key, copies them instead of classifying
    every assignment again.  The assignments are shared, never changed once made."""

    key: tuple
    roles: ScopeRoles

    def roles_for(self, analysis: "Analysis", function: "FunctionInfo", parent: ScopeRoles) -> ScopeRoles:
        seed = self.roles
        return ScopeRoles(
            weakref.ref(analysis), function, parent, set(seed.models), set(seed.optimizers), set(seed.schedulers),
            set(seed.scalers), set(seed.loss_modules), set(seed.activation_modules), set(seed.devices),
            seed.assignments, seed.statement_order, seed.loop_targets, kept=seed.kept)


# Per top-level statement: the seeds of each function in it (the newest first), by the id of its node.
_ROLE_SEEDS: FactKey[dict[int, tuple[_RoleSeed, ...]]] = FactKey("roles.seeds")


def _name_roles(analysis: "Analysis", roles: ScopeRoles) -> None:
    """Roles from what names are assigned."""
    for order, stmt in enumerate(roles.function.statements):
        roles.statement_order[stmt] = order
        for name, value, unpacked in _assigned_names(stmt):
            roles.assignments.setdefault(name, []).append(Assignment(name, stmt, order, value, unpacked))
            if isinstance(stmt, (ast.For, ast.AsyncFor)):
                roles.loop_targets.add(name)
            if value is not None and not unpacked:
                _classify_by_value(analysis, roles, name, value)
            elif unpacked:
                _classify_by_name(roles, name, only_strong=True)
            _classify_by_name(roles, name, only_strong=True)


def _classify_by_value(analysis: "Analysis", roles: ScopeRoles, name: str, value: ast.AST) -> None:
    kind = constructed_kind(analysis, value)
    if kind == "model":
        roles.models.add(name)
    elif kind == "loss_module":
        roles.loss_modules.add(name)
    elif kind == "activation":
        roles.activation_modules.add(name)
    elif kind == "optimizer":
        roles.optimizers.add(name)
    elif kind == "scheduler":
        roles.schedulers.add(name)
    elif kind == "scaler":
        roles.scalers.add(name)
    elif kind == "device":
        roles.devices.add(name)
    elif DEVICE_NAME.match(name) and not isinstance(value, ast.Constant):
        roles.devices.add(name)
    elif DEVICE_NAME.match(name) and isinstance(value, ast.Constant) and isinstance(value.value, str):
        roles.devices.add(name)


def names_a_class(name: str) -> bool:
    """`Discriminator`, `Net`: a CapWords name is a class by PEP 8 (a parameter taking the
    class to build), so calling it constructs a model rather than running one."""
    return name[:1].isupper() and not name.isupper()


def _classify_by_name(roles: ScopeRoles, name: str, only_strong: bool = False) -> None:
    """Conventional names. `only_strong` keeps to names that are rarely anything else."""
    if LOSS_MODULE_NAME.match(name):
        roles.loss_modules.add(name)
    elif SCHEDULER_NAME.match(name):
        roles.schedulers.add(name)
    elif OPTIMIZER_NAME.match(name):
        roles.optimizers.add(name)
    elif SCALER_NAME.search(name):
        roles.scalers.add(name)
    elif not only_strong and MODEL_NAME.match(name) and not names_a_class(name):
        roles.models.add(name)
    elif not only_strong and DEVICE_NAME.match(name):
        roles.devices.add(name)


def _evidence_from_use(analysis: "Analysis", roles: ScopeRoles) -> None:
    """`m.eval()`, `m.train()`, `m.parameters()` make `m` a model in this scope."""
    for call in roles.function.calls:
        func = call.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
            continue
        name = func.value.id
        if name == "self" or name in analysis.imports or _bound_to_plain_local_class(analysis, roles, name):
            continue
        if func.attr in ("eval", "parameters", "named_parameters", "modules", "named_modules", "children") and not call.args:
            roles.models.add(name)
        elif func.attr == "train" and (not call.args or _is_bool(call.args[0])) and not call.keywords:
            roles.models.add(name)
    for name in list(roles.models):
        if name in roles.loss_modules or name in roles.optimizers or name in roles.schedulers:
            roles.models.discard(name)


def _bound_to_plain_local_class(analysis: "Analysis", roles: ScopeRoles, name: str) -> bool:
    """`net = Stack([...])` where this file's `Stack` is no nn.Module: its `.parameters()`
    is the class's own (a from-scratch network, as in makemore; a boosting ensemble that
    gathers the parameters of the modules it holds), not a model's.  Also bound through a
    factory of that class that returns an instance of it (`net = Ensemble.from_file(path)`,
    a classmethod ending in `return cls(...)` or in a name bound only to `Ensemble(...)`)."""
    assignments = roles.assignments.get(name, [])
    modules = local_module_classes(analysis)

    def plain(value: ast.AST | None) -> bool:
        if not isinstance(value, ast.Call):
            return False
        func = value.func
        if isinstance(func, ast.Name):
            return func.id in analysis.classes and func.id not in modules
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            owner = func.value.id
            if owner in analysis.classes and owner not in modules:
                return _factory_returns_instance(analysis.classes[owner], func.attr)
        return False

    return bool(assignments) and all(plain(a.value) for a in assignments)


def _factory_returns_instance(cls: ast.ClassDef, method_name: str) -> bool:
    """`cls`'s classmethod or staticmethod `method_name` returns an instance of `cls` on
    every path it returns by: `return cls(...)`, `return Cls(...)`, or a name the method binds
    only to such a construction (`net = Cls(...)`, ..., `return net`)."""
    method = next((stmt for stmt in cls.body if isinstance(stmt, ast.FunctionDef) and stmt.name == method_name), None)
    if method is None:
        return False
    decorators = {d.id for d in method.decorator_list if isinstance(d, ast.Name)}
    if not decorators & {"classmethod", "staticmethod"}:
        return False
    builders = {cls.name} | ({method.args.args[0].arg} if "classmethod" in decorators and method.args.args else set())

    def constructs(node: ast.AST | None) -> bool:
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in builders

    nodes = list(walk_nodes(method))
    bound: dict[str, list[ast.AST]] = {}
    for node in nodes:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)) and node is not method:
            return False  # a nested scope may return for itself: keep to plain factories
        if isinstance(node, ast.Assign):
            for target in node.targets:
                for leaf in ast.walk(target):
                    if isinstance(leaf, ast.Name) and isinstance(leaf.ctx, ast.Store):  # not `net.lr = ...`
                        bound.setdefault(leaf.id, []).append(node.value if target is leaf else None)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.With, ast.NamedExpr)):
            targets = [node.target] if not isinstance(node, ast.With) else [i.optional_vars for i in node.items]
            for target in targets:
                for leaf in ast.walk(target) if target is not None else ():
                    if isinstance(leaf, ast.Name) and isinstance(leaf.ctx, ast.Store):
                        bound.setdefault(leaf.id, []).append(None)
    returns = [node for node in nodes if isinstance(node, ast.Return)]
    if not returns:
        return False
    for ret in returns:
        value = ret.value
        if constructs(value):
            continue
        if isinstance(value, ast.Name) and value.id in bound and all(constructs(v) for v in bound[value.id]):
            continue
        return False
    return True


def _value_facts(roles: ScopeRoles) -> None:
    """Which assignments bind graph-carrying tensors, in statement order.  A binding that is
    later `.backward()`-ed carries the graph whatever built it (`-(torch.stack(log_probs) * r).sum()`)."""
    every = sorted((a for lst in roles.assignments.values() for a in lst), key=lambda a: a.order)
    backpropagated = {id(roles.last_assignment(name, call)) for name, call in roles.backward_targets()}
    for assignment in every:
        stmt = assignment.statement
        if id(assignment) in backpropagated and not roles.analysis.context(stmt).grad_disabled:
            roles.graph_assignments.add(id(assignment))
            continue
        if assignment.value is None:
            continue
        if roles.analysis.context(stmt).grad_disabled:
            continue
        if isinstance(stmt, ast.AugAssign):
            graph = roles._graph(stmt.value, stmt, 0) or roles._graph(stmt.target, stmt, 0)
        elif assignment.unpacked:
            value = assignment.value
            graph = isinstance(value, ast.Call) and bool(roles.model_name(value))
        else:
            graph = roles._graph(assignment.value, stmt, 0)
        if graph:
            roles.graph_assignments.add(id(assignment))


# ------------------------------------------------------------------ helpers
def constructed_kind(analysis: "Analysis", value: ast.AST) -> str | None:
    """What kind of object an expression constructs, looking through `.to(...)`-style chains."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in (
        "to", "cuda", "cpu", "eval", "train", "float", "half", "double", "bfloat16", "requires_grad_", "to_empty",
    ):
        value = value.func.value
    if not isinstance(value, ast.Call):
        return None
    qualname = analysis.call_qualname(value) or ""
    last = call_name(value) or ""
    if qualname == "torch.device":
        return "device"
    if qualname.startswith("torch.optim.lr_scheduler.") or re.match(r"get_\w*schedule", last) or last in (
        "create_scheduler", "build_scheduler", "create_lr_scheduler",
    ):
        return "scheduler"
    if (qualname.startswith("torch.optim.") and last[:1].isupper()) or last in OPTIMIZER_CLASSES or last in (
        "create_optimizer", "create_optimizer_v2", "build_optimizer",
    ):
        return "optimizer"
    if last == "GradScaler":
        return "scaler"
    if qualname.startswith("torch.nn.") and qualname.count(".") == 2:
        if last.endswith("Loss"):
            return "loss_module"
        if last in ACTIVATION_MODULES:
            return "activation"
        if last in NOT_CALLABLE_MODULES or not last[:1].isupper():
            return None
        return "model"
    if qualname in MODEL_WRAPPERS or last in ("DistributedDataParallel", "DataParallel", "FullyShardedDataParallel"):
        return "model"
    if qualname.startswith(("torchvision.models.", "timm.models.", "timm.layers.")) or qualname == "timm.create_model":
        return "model"  # not `timm.data.…` label mappers, transforms or loaders
    if last == "from_pretrained" and not_a_model_loader(value):
        return None
    if last in ("from_pretrained", "create_model", "build_model") or qualname == "torch.hub.load":
        return "model"
    if isinstance(value.func, ast.Name) and value.func.id in local_module_classes(analysis):
        cls = local_module_classes(analysis)[value.func.id]
        return "loss_module" if cls.name.endswith("Loss") else "model"
    return None


_PREPROCESSOR_WORDS = ("Tokenizer", "Processor", "FeatureExtractor", "Config", "Scheduler", "Pipeline")


def not_a_model_loader(call: ast.Call) -> bool:
    """`AutoTokenizer.from_pretrained(...)`, `CLIPProcessor.from_pretrained(...)`: a
    tokenizer or processor is called like a model but is not a module."""
    owner = call.func.value if isinstance(call.func, ast.Attribute) else None
    name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
    return any(word in name for word in _PREPROCESSOR_WORDS)


_MODULE_CLASSES: FactKey[dict[str, ast.ClassDef]] = FactKey("local nn.Module classes")
_CLASS_ATTRIBUTE_ROLES: FactKey[dict[ast.ClassDef, dict[str, set[str]]]] = FactKey("roles of self attributes, per class")


def local_module_classes(analysis: "Analysis") -> dict[str, ast.ClassDef]:
    """Classes of this file that subclass `nn.Module` (directly or through each other)."""
    return analysis.facts.get_or_compute(_MODULE_CLASSES, lambda: _module_classes(analysis))


def _module_classes(analysis: "Analysis") -> dict[str, ast.ClassDef]:
    found: dict[str, ast.ClassDef] = {}
    changed = True
    while changed:
        changed = False
        for name, cls in analysis.classes.items():
            if name in found:
                continue
            for base in cls.bases:
                qualname = analysis.qualname(base) or ""
                if qualname in MODULE_BASES or (isinstance(base, ast.Name) and base.id in found) or qualname.endswith(
                    ("LightningModule", "PreTrainedModel")
                ):
                    found[name] = cls
                    changed = True
                    break
    return found


def _layer_parameters(analysis: "Analysis", cls: ast.ClassDef) -> set[str]:
    """Parameters of the class's `__init__` annotated with a torch layer that holds weights
    (`base: nn.Linear`): the layer a wrapper such as a LoRA adapter keeps."""
    for method in cls.body:
        if isinstance(method, ast.FunctionDef) and method.name == "__init__":
            found = set()
            for a in [*method.args.posonlyargs, *method.args.args, *method.args.kwonlyargs]:
                qualname = analysis.qualname(a.annotation) if a.annotation is not None else None
                if qualname and qualname.startswith("torch.nn.") and qualname.rsplit(".", 1)[-1] in _WEIGHTED_LAYERS:
                    found.add(a.arg)
            return found
    return set()


def _number_parameters(cls: ast.ClassDef) -> set[str]:
    """Names of the class's `__init__` that hold numbers: parameters with a number default
    (`min_scale=0.3`) or a `float`/`int` annotation, and locals only ever bound to a config
    value (`n_codebooks = config.n_codebooks`)."""
    for method in cls.body:
        if isinstance(method, ast.FunctionDef) and method.name == "__init__":
            args = [*method.args.posonlyargs, *method.args.args]
            defaults = dict(zip([a.arg for a in args][len(args) - len(method.args.defaults):], method.args.defaults))
            defaults.update((a.arg, d) for a, d in zip(method.args.kwonlyargs, method.args.kw_defaults) if d is not None)
            found = {name for name, default in defaults.items() if isinstance(default, ast.Constant)
                     and type(default.value) in (int, float)}
            found |= {a.arg for a in [*args, *method.args.kwonlyargs]
                      if isinstance(a.annotation, ast.Name) and a.annotation.id in ("int", "float")}
            config_locals: dict[str, bool] = {}
            for node in walk_nodes(method):
                if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.withitem, ast.NamedExpr)):
                    targets = node.targets if isinstance(node, ast.Assign) else [
                        node.optional_vars if isinstance(node, ast.withitem) else node.target]
                    for target in targets:
                        plain = isinstance(target, ast.Name) and isinstance(node, ast.Assign) \
                            and is_config_number(node.value)  # `a, b = ...` or a loop binds something else
                        for name in (n for n in walk_nodes(target) if isinstance(n, ast.Name)) if target else ():
                            config_locals[name.id] = config_locals.get(name.id, True) and plain
            return found | {name for name, plain in config_locals.items() if plain}
    return set()


def frozen_parameter(call: ast.Call) -> bool:
    """`nn.Parameter(t, requires_grad=False)` (or `False` second): a parameter that moves and
    saves with its module but requires no grad (noise buffers, fixed tables)."""
    flag = call.args[1] if len(call.args) > 1 else getattr(keyword(call, "requires_grad"), "value", None)
    return isinstance(flag, ast.Constant) and flag.value is False


def makes_grad_leaf(analysis: "Analysis", value: ast.AST | None) -> bool:
    """`value` makes a leaf tensor that requires grad: `nn.Parameter(t)` (not a frozen one),
    `t.requires_grad_()`, or a `torch.*` factory given `requires_grad=True`."""
    if not isinstance(value, ast.Call):
        return False
    if analysis.call_qualname(value) in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
        return not frozen_parameter(value)  # a frozen one is changed in place freely
    if call_name(value) == "requires_grad_":
        args = value.args or [kw.value for kw in value.keywords]
        return not args or (isinstance(args[0], ast.Constant) and args[0].value is True)
    kw = keyword(value, "requires_grad")
    qualname = analysis.call_qualname(value) or ""
    return (
        kw is not None and isinstance(kw.value, ast.Constant) and kw.value.value is True and qualname.startswith("torch.")
    )


def class_attribute_roles(analysis: "Analysis", cls: ast.ClassDef) -> dict[str, set[str]]:
    """`self.x = ...` in a class: which attributes are parameters (that require grad),
    models, loss modules."""
    cache = analysis.facts.get_or_compute(_CLASS_ATTRIBUTE_ROLES, dict)
    if cls in cache:
        return cache[cls]
    result = {"parameter": set(), "model": set(), "loss": set(), "activation": set(), "number": set()}
    containers: set[str] = set()  # also bound to a dict or list somewhere: not one tensor
    numbers: dict[str, bool] = {}  # only ever set to a constant, a config value or a number parameter
    number_parameters = _number_parameters(cls)
    layer_parameters = _layer_parameters(analysis, cls)
    for node in walk_nodes(cls):
        if not isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                numbers[target.attr] = numbers.get(target.attr, True) and not isinstance(node, ast.AugAssign) \
                    and node.value is not None and (is_config_number(node.value) or (
                        isinstance(node.value, ast.Name) and node.value.id in number_parameters))
                if node.value is None or isinstance(node, ast.AugAssign):
                    continue
                if _is_container(analysis, node.value):
                    containers.add(target.attr)
                    continue
                if isinstance(node.value, ast.Name) and node.value.id in layer_parameters:
                    result["model"].add(target.attr)  # `self.base = base` with `base: nn.Linear`
                    continue
                qualname = analysis.qualname(node.value.func) if isinstance(node.value, ast.Call) else None
                if qualname in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
                    if not frozen_parameter(node.value):
                        result["parameter"].add(target.attr)
                    continue
                kind = constructed_kind(analysis, node.value)
                if kind == "model":
                    result["model"].add(target.attr)
                elif kind == "loss_module":
                    result["loss"].add(target.attr)
                elif kind == "activation":
                    result["activation"].add(target.attr)
    result["parameter"] -= containers
    result["number"] = {name for name, plain in numbers.items() if plain}
    cache[cls] = result  # before the bases: a class that (wrongly) derives from itself stops here
    for base in _local_base_classes(analysis, cls):
        for role, names in class_attribute_roles(analysis, base).items():
            result[role] |= names - numbers.keys()  # what the subclass assigns itself, it decides
    if any((analysis.qualname(base) or "").rsplit(".", 1)[-1] in _WEIGHTED_LAYERS
           and (analysis.qualname(base) or "").startswith("torch.nn.") for base in cls.bases):
        result["parameter"] |= {"weight", "bias"} - numbers.keys()  # `class PrunedLinear(nn.Linear)`
    return result


# torch layers whose `weight` and `bias` are parameters, for classes that derive from them.
_WEIGHTED_LAYERS = {"Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
                    "ConvTranspose3d", "Embedding", "LayerNorm", "GroupNorm", "BatchNorm1d", "BatchNorm2d",
                    "BatchNorm3d"}


def _local_base_classes(analysis: "Analysis", cls: ast.ClassDef) -> list[ast.ClassDef]:
    """The bases of `cls` that are classes defined at the top level of this file."""
    if analysis.tree is None:
        return []
    defined = {node.name: node for node in analysis.tree.body if isinstance(node, ast.ClassDef)}
    return [defined[base.id] for base in cls.bases if isinstance(base, ast.Name) and base.id in defined
            and defined[base.id] is not cls]


_SELF_ATTRIBUTE_VALUES: FactKey[dict[ast.ClassDef, dict[str, list[ast.AST | None]]]] = FactKey(
    "values of self attributes, per class")


def self_attribute_values(analysis: "Analysis", cls: ast.ClassDef) -> dict[str, list[ast.AST | None]]:
    """`self.x = value` in the methods of a class: attribute -> values (None for `+=` and the like)."""
    return analysis.facts.get_or_compute(_SELF_ATTRIBUTE_VALUES, lambda: _self_attribute_values(analysis)).setdefault(
        cls, {})


def _self_attribute_values(analysis: "Analysis") -> dict[ast.ClassDef, dict[str, list[ast.AST | None]]]:
    """`self_attribute_values` of every class, in one pass over the methods (a pass over every
    function per class asked was quadratic in a file of many classes)."""
    tables: dict[ast.ClassDef, dict[str, list[ast.AST | None]]] = {}
    for function in analysis.functions:
        if function.class_node is None:
            continue
        table = tables.setdefault(function.class_node, {})
        for stmt in function.statements:
            if isinstance(stmt, ast.Assign):
                targets, value = stmt.targets, stmt.value
            elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
                targets, value = [stmt.target], stmt.value if isinstance(stmt, ast.AnnAssign) else None
            else:
                continue
            for target in targets:
                if is_self_attribute(target):
                    table.setdefault(target.attr, []).append(value)
    return tables


def is_config_number(value: ast.AST) -> bool:
    """A numeric constant or a config value (`config.layerdrop`, `-cfg.p`)."""
    if isinstance(value, ast.Constant):
        return isinstance(value.value, (int, float, bool))
    if isinstance(value, ast.UnaryOp):
        return is_config_number(value.operand)
    root = value
    while isinstance(root, ast.Attribute):
        root = root.value
    return root is not value and isinstance(root, ast.Name) and "config" in root.id.lower()


_CONTAINER_CALLS = {"dict", "list", "collections.OrderedDict", "collections.defaultdict",
                    "torch.nn.ParameterDict", "torch.nn.ParameterList"}


def _is_container(analysis: "Analysis", value: ast.AST) -> bool:
    """`{}`, `[]`, a comprehension, `dict()`, `nn.ParameterDict()`: a holder of tensors, not a tensor."""
    if isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)):
        return True
    if isinstance(value, ast.Call):
        name = analysis.qualname(value.func) or (value.func.id if isinstance(value.func, ast.Name) else None)
        return name in _CONTAINER_CALLS
    return False


def _assigned_names(stmt: ast.stmt):
    """(name, value, unpacked) for each simple name a statement binds."""
    if isinstance(stmt, ast.Assign):
        for target in stmt.targets:
            yield from _target_names(target, stmt.value)
    elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        yield from _target_names(stmt.target, stmt.value)
    elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
        yield stmt.target.id, stmt.value, False
    elif isinstance(stmt, (ast.For, ast.AsyncFor)):
        for name in _plain_names(stmt.target):
            yield name, None, True
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        for item in stmt.items:
            if item.optional_vars is not None:
                for name in _plain_names(item.optional_vars):
                    yield name, None, True


def _target_names(target: ast.AST, value: ast.AST):
    if isinstance(target, ast.Name):
        yield target.id, value, False
    elif isinstance(target, (ast.Tuple, ast.List)):
        if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
            for t, v in zip(target.elts, value.elts):
                yield from _target_names(t, v)
        else:
            for name in _plain_names(target):
                yield name, value, True


def _plain_names(target: ast.AST) -> list[str]:
    return [n.id for n in walk_nodes(target) if isinstance(n, ast.Name)]


def _tensor_args(call: ast.Call) -> list[ast.AST]:
    args = []
    for a in call.args:
        if isinstance(a, (ast.List, ast.Tuple)):
            args.extend(a.elts)
        else:
            args.append(a)
    return args


def _is_bool(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, bool)


# ------------------------------------------------------------ value flow
def reaching_assignment(analysis: "Analysis", name: ast.Name) -> Assignment | None:
    """The plain `name = value` that surely ran last before this use, or None.

    `ScopeRoles.last_assignment` in statement order, kept only when no branch can skip
    it: it sits in the same block as the use (or in a block that encloses it).  Names
    rebound by a lambda or comprehension are not followed."""
    if rebound_in_expression(analysis, name):
        return None
    assignment = analysis.roles_for(name).last_assignment(name.id, name)
    if assignment is None or assignment.value is None or assignment.unpacked:
        return None
    if not isinstance(assignment.statement, (ast.Assign, ast.AnnAssign)):
        return None
    use = analysis.statement_of(name)
    if use is None or not dominates(analysis, assignment.statement, use):
        return None
    return assignment


def dominates(analysis: "Analysis", earlier: ast.stmt, later: ast.stmt) -> bool:
    """`earlier` runs before `later` on every path through their function: it precedes
    `later`, or a statement enclosing `later`, in the same block."""
    block = analysis.block_of(earlier)
    if block is None:
        return False
    position = _index_in(block, earlier)
    node: ast.AST | None = later
    while node is not None:
        index = _index_in(block, node)
        if index is not None:
            return position < index
        node = analysis.parents.get(node)
    return False


def _index_in(block: list[ast.stmt], node: ast.AST) -> int | None:
    for index, stmt in enumerate(block):
        if stmt is node:
            return index
    return None


def rebound_in_expression(analysis: "Analysis", name: ast.Name) -> bool:
    """`lambda x: x.view(-1)` or `[x.t() for x in xs]`: the name is not the function's local."""
    node = analysis.parents.get(name)
    while node is not None and not isinstance(node, ast.stmt):
        if isinstance(node, ast.Lambda):
            params = node.args
            if name.id in {a.arg for a in params.posonlyargs + params.args + params.kwonlyargs}:
                return True
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            for generator in node.generators:
                if any(isinstance(n, ast.Name) and n.id == name.id for n in walk_nodes(generator.target)):
                    return True
        if isinstance(node, ast.NamedExpr) and node.target.id == name.id:
            return True
        node = analysis.parents.get(node)
    return False

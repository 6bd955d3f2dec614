"""TL705 torch-load-unsafe: `torch.load(...)` without `weights_only`."""
from __future__ import annotations

import ast
import itertools
import sys
from typing import TYPE_CHECKING, Iterator

from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.api.catalogue import at_least, version_text
from torch_lsp.diagnostics.api.uses import calls_of
from torch_lsp.diagnostics.base import Finding, FixInfo, Related, Rule
from torch_lsp.diagnostics.correctness.provenance import MODULE_MOVES
from torch_lsp.name_resolution import in_compatibility_code
from torch_lsp.syntax_nodes import argument, call_name, has_star_args, is_self_attribute, keyword, node_key, node_text

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis

SAFE_DEFAULT_FROM = "2.6"  # `weights_only` defaults to True from this release


def passes_pickle_module(call) -> bool:
    return argument(call, 2, "pickle_module") is not None


@register
class TorchLoadUnsafe(Rule):
    """## What it does
    Flags `torch.load(...)` without `weights_only=`.  On a `target-version` before 2.6 it
    is a warning; from 2.6, where `weights_only` defaults to True, it is information: the
    same file still unpickles anything when run on an older PyTorch.  Where what it loads is
    used as a module (`decoder = checkpoint["decoder"]; decoder.eval()`, `model.flatten_parameters()`, moved by a
    statement that drops the result, `policy = snapshot["policy"]; policy.cuda()`, which only moves a module, also by a function of
    the file it is handed to, `generate(decoder, ...)` calling `decoder(...)`), or a load that is
    returned or bound to a model name sits in a file that `torch.save`s whole models (at
    module level a name like `GMF_model` or `model` counts, unless it is read as a mapping (a string key, `"params" in net`, `net.items()`):
    a checkpoint dict), the
    finding says so instead: 2.6 and later refuse such a file by default, so the advice is a
    `state_dict()` or `weights_only=False` for a trusted file, and no fix is offered.  So
    too for a load the function then requires to be an instance of a class that a
    weights-only load never gives (`obj = torch.load(fname); assert isinstance(obj, cls)`: a
    pickled object, whose advice is `weights_only=False` for a trusted file).  So too for a
    checkpoint whose entry is bound to a name the function's other path builds as a model or
    optimizer (`model = SSD300(...)`; `optimizer = torch.optim.SGD(...)`, or on resume
    `model = checkpoint["model"]`; `optimizer = checkpoint["optimizer"]`: the objects pickled
    whole, whose advice is their `state_dict()`).  So
    too for a load read for other entries (`checkpoint["optimizer"]`) of a checkpoint dict
    the file saves with its arguments or config in it (`{..., "args": args}`, or written entry by
    entry, `package["args"] = self.args`, where `args` is read by attribute, `args.output_dir`:
    an object, not a plain dict), or with a model in it
    (`torch.save(dict(net=net, optimizer_state=...), path)`: the module pickled whole, whose
    advice is its `state_dict()`; so too an attribute named like a model or an optimizer,
    `{"optimizer": self.optimizer}`, where the load reads that very entry back), and for a load that
    reads back what the file pickles whole: the same names saved to the same path expression
    (`corpus = torch.load(fn)` after `torch.save(corpus, fn)`, `model, criterion, optimizer =
    torch.load(f)` after `torch.save([model, criterion, optimizer], f)`), one of them a model,
    optimizer, scheduler or loss module, or an instance of a class of the project.  Not
    flagged: a load in a branch on the caller's own `weights_only` (`if not weights_only:`),
    one given a `pickle_module` (then every PyTorch unpickles by default, and `weights_only=True`
    cannot go with it: the caller's choice), one in a branch for some PyTorch versions (`if
    torch_version < "2.6":`), or in an `except TypeError:` fallback for a PyTorch whose
    `torch.load` lacks the keyword,
    nor one reading an `io.BytesIO` in a function that also `torch.save`s into one (a
    round trip of the program's own objects, as when ranks broadcast them).

    ## Why is this bad
    Before 2.6, `torch.load` unpickles whatever the file holds, and unpickling runs code:
    a checkpoint downloaded from the internet can execute anything on the machine.

    ## Example
    ```python
    state = torch.load("checkpoint.pt")
    ```

    ## Use instead
    ```python
    state = torch.load("checkpoint.pt", weights_only=True)
    ```

    ## Fix safety
    Adds `weights_only=True`, the default of PyTorch 2.6 and later: safe on a `target-version` of 2.6 or later, where it only
    states the default; unsafe before, where a checkpoint that pickles more than tensors and
    plain containers then fails to load (allow its types with
    `torch.serialization.add_safe_globals`).
    """

    code = "TL705"
    name = "torch-load-unsafe"
    severity = "warning"
    fix_safety = "safe"
    whole_file = True  # matches a load with the saves anywhere in the file by the path's text
    fix_only_where_exact = True

    def check(self, analysis: "Analysis") -> Iterator[Finding]:
        version = analysis.torch_version
        safe_default = at_least(version, SAFE_DEFAULT_FROM)
        for call in calls_of(analysis, "torch.load"):
            if keyword(call, "weights_only") is not None or has_star_args(call) or passes_pickle_module(call):
                continue  # with a `pickle_module`, every PyTorch unpickles (the default is False): the caller's choice
            # A branch for some PyTorch versions; of the handlers, only `except TypeError:` is a
            # fallback for a `torch.load` without the keyword (`_chosen_or_fallback`).
            if _chosen_or_fallback(analysis, call) or in_compatibility_code(analysis, call, versions_only=True) \
                    or _reads_own_bytes(analysis, call) or _tests_the_default(analysis, call):
                continue  # the caller's choice, a fallback for an old torch, bytes this program made, or a test of torch.load
            name = node_text(analysis.lines, call.func)
            module_use = _loaded_module_use(analysis, call)
            if module_use is not None:
                yield self._whole_module(call, name, module_use)
                continue
            built = _entry_of_built_object(analysis, call)
            if built is not None:
                yield self._built_entry(call, name, *built)
                continue
            checked = _checked_as_object(analysis, call)
            if checked is not None:
                yield self._pickled_object(call, name, *checked)
                continue
            round_trip = _saved_objects_read(analysis, call)
            if round_trip is not None:
                yield self._saved_objects(analysis, call, name, *round_trip)
                continue
            module_entry = _saved_module_read(analysis, call)
            if module_entry is not None:
                yield self._saved_module(call, name, module_entry)
                continue
            settings = _saved_settings_read(analysis, call)
            if settings is not None:
                yield self._saved_settings(call, name, settings)
                continue
            settings_entry = _settings_entry_read(analysis, call)
            if settings_entry is not None:
                yield self._settings_entry(call, name, settings_entry)
                continue
            title = "Add `weights_only=True`"
            if safe_default:
                message = (f"`{name}(...)` without `weights_only`: {version_text(version)} loads only weights by "
                           f"default, but PyTorch before {SAFE_DEFAULT_FROM} unpickles anything the file holds, "
                           "which can run code. Pass `weights_only=True` so every version loads it safely.")
            else:
                message = (f"`{name}(...)` without `weights_only` unpickles anything the file holds on "
                           f"{version_text(version)}, and unpickling can run arbitrary code. Pass `weights_only=True` "
                           "(or `weights_only=False` only for files you trust).")
            finding = self.finding(call, message, title)
            if safe_default:
                finding.severity = "information"
            elif finding.fix is not None:
                # Before 2.6 the flag changes what loads: a checkpoint pickling more than
                # tensors then fails.  Only where it is the default already is it safe.
                finding.fix = FixInfo(finding.fix.title, "unsafe")
            yield finding

    def _whole_module(self, call: ast.Call, name: str, evidence: ast.AST) -> Finding:
        message = (f"`{name}(...)` loads a pickled module here, not only weights: PyTorch {SAFE_DEFAULT_FROM} and "
                   "later refuse it by default (`weights_only=True`), and before that unpickling can run "
                   "arbitrary code. Save and load the model's `state_dict()` instead, or pass "
                   "`weights_only=False` for a file you trust.")
        return self._no_fix(call, message, evidence, "a module is what it loads")

    def _built_entry(self, call: ast.Call, name: str, entry: str, construction: ast.AST, kind: str) -> Finding:
        message = (f"`{name}(...)` loads a checkpoint whose entry `{entry}` is {kind} pickled whole (the other path "
                   f"builds `{entry}` at line {construction.lineno}), not only weights: PyTorch {SAFE_DEFAULT_FROM} "
                   "and later refuse it by default (`weights_only=True`), and before that unpickling can run "
                   f"arbitrary code. Save `{entry}.state_dict()` in the checkpoint instead, or pass "
                   "`weights_only=False` for a file you trust.")
        return self._no_fix(call, message, construction, f"`{entry}` is built here")

    def _pickled_object(self, call: ast.Call, name: str, check: ast.Call, kind: str) -> Finding:
        what = "instance of this class" if kind in ("cls", "self.__class__", "type(self)") else f"`{kind}` object"
        message = (f"`{name}(...)` loads a pickled {what} here, not only weights: PyTorch "
                   f"{SAFE_DEFAULT_FROM} and later refuse it by default (`weights_only=True`), and before that "
                   "unpickling can run arbitrary code. Pass `weights_only=False` for a file you trust (or allow "
                   "the class with `torch.serialization.add_safe_globals`).")
        return self._no_fix(call, message, check, f"what it loads must be a `{kind}`")

    def _saved_objects(self, analysis: "Analysis", call: ast.Call, name: str, saving: ast.Call, obj: str,
                       kind: str) -> Finding:
        saved = node_text(analysis.lines, saving.args[0])
        message = (f"`{name}(...)` reads back `{saved}`, which this file pickles whole with `torch.save`: "
                   f"`{obj}` is {kind}, not a tensor, so PyTorch {SAFE_DEFAULT_FROM} and later refuse the file by "
                   "default (`weights_only=True`), and older versions unpickle anything, which can run code. Save "
                   "plain data instead (`state_dict()`, tensors, lists, dicts), or pass `weights_only=False` for a "
                   "file you trust.")
        return self._no_fix(call, message, saving, f"`{saved}` is saved here")

    def _saved_module(self, call: ast.Call, name: str, entry: tuple[ast.AST, str, str, str]) -> Finding:
        where, key, value, kind = entry
        message = (f"`{name}(...)` reads a checkpoint this file saves with `{key!r}: {value}` in it, {kind} "
                   f"pickled whole, not only weights: PyTorch {SAFE_DEFAULT_FROM} and later refuse it by default "
                   "(`weights_only=True`), and before that unpickling can run arbitrary code. Save "
                   f"`{value}.state_dict()` in the checkpoint instead, or pass `weights_only=False` for a file you "
                   "trust.")
        return self._no_fix(call, message, where, f"`{value}` is saved whole here")

    def _saved_settings(self, call: ast.Call, name: str, entry: tuple[ast.AST, str, ast.AST]) -> Finding:
        key, text, value = entry
        saved = ast.unparse(value)
        message = (f"`{name}(...)` reads a checkpoint this file saves with `{text!r}: {saved}` in it: "
                   f"parsed arguments or a config object (`argparse.Namespace`, a config node), which PyTorch "
                   f"{SAFE_DEFAULT_FROM} and later refuse by default (`weights_only=True`), while older versions "
                   "unpickle anything, which can run code. Save plain values instead (`vars(args)`, the config as "
                   "a dict), or pass `weights_only=False` for a file you trust.")
        return self._no_fix(call, message, key, f"`{saved}` is saved with the weights here")

    def _settings_entry(self, call: ast.Call, name: str, binding: ast.Assign) -> Finding:
        target, entry = binding.targets[0].id, binding.value
        message = (f"`{name}(...)` returns a checkpoint whose `{entry.slice.value!r}` entry this code reads as an "
                   f"object (`{target} = {entry.value.id}[{entry.slice.value!r}]`, then `{target}.` attributes): parsed "
                   f"arguments or a config object (`argparse.Namespace`, a config node), which PyTorch "
                   f"{SAFE_DEFAULT_FROM} and later refuse by default (`weights_only=True`), while older versions "
                   "unpickle anything, which can run code. Save plain values instead (`vars(args)`, the config as "
                   "a dict), or pass `weights_only=False` for a file you trust.")
        return self._no_fix(call, message, binding, f"`{target}` is read as an object from here")

    def _no_fix(self, call: ast.Call, message: str, evidence: ast.AST, note: str) -> Finding:
        """A finding whose file `weights_only=True` would refuse: no fix, and where the evidence is."""
        finding = self.finding(call, message, None)
        finding.related.append(Related.at(evidence, note))
        return finding


def _chosen_or_fallback(analysis: "Analysis", call: ast.Call) -> bool:
    """Inside `if not weights_only:` (the caller chose to unpickle), or in an `except
    TypeError:` handler (the fallback for a PyTorch whose `torch.load` has no `weights_only`)."""
    child, parent = call, analysis.parents.get(call)
    while parent is not None:
        if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test and any(
                isinstance(n, ast.Name) and n.id == "weights_only" for n in ast.walk(parent.test)):
            return True
        if isinstance(parent, ast.ExceptHandler) and parent.type is not None and any(
                isinstance(n, ast.Name) and n.id == "TypeError" for n in ast.walk(parent.type)):
            return True
        child, parent = parent, analysis.parents.get(parent)
    return False


def _tests_the_default(analysis: "Analysis", call: ast.Call) -> bool:
    """In a test file, a load that only tests loading: its result discarded (`torch.load(path)`
    as a statement: does the default load this file?) or expected to fail (`with
    pytest.raises(UnpicklingError): torch.load(path)`).  Passing `weights_only` would change
    what is tested."""
    if not analysis.is_test_file:
        return False
    statement = analysis.statement_of(call)
    if isinstance(statement, ast.Expr) and statement.value is call:
        return True
    node = analysis.parents.get(call)
    while node is not None and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
        if isinstance(node, ast.With) and any(isinstance(item.context_expr, ast.Call)
                                              and call_name(item.context_expr) == "raises" for item in node.items):
            return True
        node = analysis.parents.get(node)
    return False


def _reads_own_bytes(analysis: "Analysis", call: ast.Call) -> bool:
    """`torch.load(buffer)` of an `io.BytesIO` in a function that itself `torch.save`s into an
    `io.BytesIO`: a round trip of objects the program serialised (a broadcast between the
    ranks of one job), not bytes from outside."""
    function = analysis.context(call).function
    saves_to_memory = any(
        analysis.call_qualname(c) == "torch.save" and len(c.args) > 1 and _is_bytes_buffer(analysis, c.args[1], c)
        for c in function.calls)
    return saves_to_memory and _is_bytes_buffer(analysis, argument(call, 0, "f"), call)


def _is_bytes_buffer(analysis: "Analysis", value: ast.AST | None, at: ast.AST) -> bool:
    if isinstance(value, ast.Call):
        return analysis.call_qualname(value) == "io.BytesIO"
    if not isinstance(value, ast.Name):
        return False
    bound = [_bound_value(a) for a in analysis.roles_for(at).assignments.get(value.id, ())]
    return bool(bound) and all(isinstance(v, ast.Call) and analysis.call_qualname(v) == "io.BytesIO" for v in bound)


def _bound_value(assignment) -> ast.AST | None:
    """What an assignment binds its name to; for `with io.BytesIO() as buffer:` the context
    expression (the value `__enter__` returns is the buffer itself)."""
    statement = assignment.statement
    if isinstance(statement, (ast.With, ast.AsyncWith)):
        return next((item.context_expr for item in statement.items if isinstance(item.optional_vars, ast.Name)
                     and item.optional_vars.id == assignment.name), None)
    return assignment.value


def _saved_objects_read(analysis: "Analysis", call: ast.Call) -> tuple[ast.Call, str, str] | None:
    """The `torch.save` whose file this load reads back, when it saves objects whole: the load
    binds the same names the save pickles (`corpus = torch.load(fn)` and `torch.save(corpus,
    fn)`; `model, criterion, optimizer = torch.load(f)` and `torch.save([model, criterion,
    optimizer], f)`), to the same path expression, and one of them is a model, an optimizer,
    a scheduler or a loss module, or is built by a class of the project (`Corpus(path)`),
    all of which `weights_only=True` refuses: (the save, that name, what it is).  None otherwise."""
    holder = analysis.parents.get(call)
    if not (isinstance(holder, ast.Assign) and len(holder.targets) == 1):
        return None
    loaded = _bound_names(holder.targets[0])
    path = argument(call, 0, "f")
    if not loaded or path is None:
        return None
    path_text = node_text(analysis.lines, path)
    for saving in analysis.calls_to("torch.save"):
        target = argument(saving, 1, "f")
        if len(saving.args) < 1 or target is None or node_text(analysis.lines, target) != path_text:
            continue
        if _bound_names(saving.args[0]) != loaded:
            continue
        for name in loaded:
            kind = _pickled_object(analysis, saving, name, call)
            if kind is not None:
                return saving, name, kind
    return None


def _bound_names(node: ast.AST) -> tuple[str, ...]:
    """`x` -> ("x",); `a, b` or `[a, b]` -> ("a", "b"); `self.vocab, self.train` -> ("self.vocab",
    "self.train"); () for anything else."""
    if isinstance(node, ast.Name):
        return (node.id,)
    if is_self_attribute(node):
        return (f"self.{node.attr}",)
    if isinstance(node, (ast.Tuple, ast.List)) and node.elts and all(
            isinstance(e, ast.Name) or is_self_attribute(e) for e in node.elts):
        return tuple(e.id if isinstance(e, ast.Name) else f"self.{e.attr}" for e in node.elts)
    return ()


def _pickled_object(analysis: "Analysis", saving: ast.Call, name: str, load: ast.Call) -> str | None:
    """`name`, where `saving` saves it, is a model, optimizer, scheduler or loss module, or is
    bound in that scope (besides by the `load` itself) only to instances of a class of the
    project (`corpus = data.Corpus(path)`): what it is, or None."""
    if name.startswith("self."):
        return _saved_attribute_object(analysis, saving, name[len("self."):])
    roles = analysis.roles_for(saving)
    for is_role, kind in ((roles.is_model, "a model"), (roles.is_optimizer, "an optimizer"),
                          (roles.is_scheduler, "a learning-rate scheduler"), (roles.is_loss_module, "a loss module")):
        if is_role(name):
            return kind
    built = [a.value for a in roles.assignments.get(name, ()) if a.value is not load]
    if not built or not all(isinstance(value, ast.Call) for value in built):
        return None
    classes = [_project_class(analysis, value) for value in built]
    if None in classes:
        return _library_object(analysis, name, built)
    return f"a `{classes[0]}` object" if len(set(classes)) == 1 else "an object of a class of the project"


def _project_class(analysis: "Analysis", value: ast.AST) -> str | None:
    """The name of the class of the project (this file or a workspace file) that `value`
    constructs (`data.Corpus(path)`), or None."""
    from torch_lsp.workspace_files import project_definition

    found = project_definition(analysis, value.func) if isinstance(value, ast.Call) else None
    return found[1].name if found is not None and isinstance(found[1], ast.ClassDef) else None


def _saved_attribute_object(analysis: "Analysis", saving: ast.Call, attr: str) -> str | None:
    """`self.<attr>` of the class whose method saves it is bound, somewhere in that class, to an
    instance of a class of the project (`self.vocab = Vocab(**kwargs)`): what it is, or None."""
    from torch_lsp.roles import self_attribute_values

    cls = analysis.context(saving).function.class_node
    if cls is None:
        return None
    name = next(filter(None, (_project_class(analysis, v) for v in self_attribute_values(analysis, cls).get(attr, ()))),
                None)
    return f"a `{name}` object" if name is not None else None


# Packages whose classes build tensors, arrays or plain values that a weights-only load may accept.
_PLAIN_DATA_PACKAGES = {"torch", "torchvision", "torchaudio", "numpy", "builtins"}


def _library_object(analysis: "Analysis", name: str, built: list[ast.Call]) -> str | None:
    """`name` is built by a class imported from a library other than torch (`adj_t =
    SparseTensor(row=..., col=...)`, a CamelCase name bound by `from torch_sparse import
    SparseTensor`), and otherwise only transformed from itself (`adj_t = adj_t.to_symmetric()`,
    `adj_t = gcn_norm(adj_t)`) or read from a file: an object of that library, which `weights_only=True` refuses.
    What it is, or None."""
    classes = set()
    for value in built:
        func = value.func
        qualname = analysis.qualname(func) if isinstance(func, ast.Name) else None
        if qualname and "." in qualname and func.id[:1].isupper() and not func.id.isupper() \
                and qualname.split(".")[0] not in _PLAIN_DATA_PACKAGES \
                and qualname.split(".")[0] not in sys.stdlib_module_names:
            classes.add(func.id)
        elif not (_transforms(value, name) or analysis.call_qualname(value) == "torch.load"):
            return None  # (another read of a cache, `adj_t = torch.load(path_sym)`, tells nothing)
    return f"a `{classes.pop()}` object" if len(classes) == 1 else None


def _transforms(call: ast.Call, name: str) -> bool:
    """`name.method(...)` or `function(name, ...)`: a value computed from `name` itself."""
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == name:
        return True
    return bool(call.args) and isinstance(call.args[0], ast.Name) and call.args[0].id == name


# What a training script saves beside the weights under these names is its parsed arguments or
# its config (`argparse.Namespace`, a yacs `CfgNode`): objects `weights_only=True` refuses.
_SETTINGS_NAMES = {"args", "opt", "opts", "config", "cfg", "hparams"}
# Entries every kind of checkpoint has: reading them says nothing about which file is loaded.
_WEIGHT_KEYS = {"model", "state_dict", "model_state_dict", "net", "weights", "module"}


def _saved_settings_read(analysis: "Analysis", call: ast.Call) -> tuple[ast.AST, str, ast.AST] | None:
    """The `'args': args` entry of a checkpoint dict the file saves (`torch.save(state, path)`,
    or a saving helper such as `save_on_master({...}, path)`; also `package["args"] = self.args`
    written into the dict before the save), when what this load returns
    is read for another entry of that dict than the weights (`checkpoint["optimizer"]`,
    `"epoch" in checkpoint`): the load reads that kind of checkpoint.  None otherwise."""
    holder = analysis.parents.get(call)
    if not (isinstance(holder, ast.Assign) and len(holder.targets) == 1 and isinstance(holder.targets[0], ast.Name)):
        return None
    read = _keys_read(analysis.context(call).function.node, holder) - _WEIGHT_KEYS
    if not read:
        return None
    for entries, saving in _saved_dicts(analysis):
        if not read & {key for _, key, _ in entries}:
            continue
        scope = analysis.context(saving).function.node
        for where, key, value in entries:
            if isinstance(value, ast.Name) and value.id in _SETTINGS_NAMES and _used_as_object(scope, value.id):
                return where, key, value
            if _settings_attribute(value) and _used_as_object(scope, value):
                return where, key, value  # `package["args"] = self.args`, with `self.args.save_every` read
    return None


def _settings_entry_read(analysis: "Analysis", call: ast.Call) -> ast.Assign | None:
    """`ckpt = torch.load(path)`, then `args = ckpt["args"]` and `args.channel` in the same
    function (vq-vae-2's `sample.py`, loading the checkpoints `train_pixelsnail.py` saves with
    its parsed arguments): an entry named and read like parsed arguments or a config object,
    which `weights_only=True` refuses.  The binding, or None."""
    holder = analysis.parents.get(call)
    if not (isinstance(holder, ast.Assign) and len(holder.targets) == 1 and isinstance(holder.targets[0], ast.Name)):
        return None
    loaded = holder.targets[0].id
    function = analysis.context(call).function
    for statement in function.statements:
        if not (isinstance(statement, ast.Assign) and statement.lineno > holder.end_lineno
                and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)
                and statement.targets[0].id in _SETTINGS_NAMES):
            continue
        entry = statement.value
        if isinstance(entry, ast.Subscript) and isinstance(entry.value, ast.Name) and entry.value.id == loaded \
                and isinstance(entry.slice, ast.Constant) and isinstance(entry.slice.value, str) \
                and _used_as_object(function.node, statement.targets[0].id):
            return statement
    return None


def _saved_module_read(analysis: "Analysis", call: ast.Call) -> tuple[ast.AST, str, str, str] | None:
    """The `'net': net` entry of a checkpoint dict the file saves (`torch.save(dict(net=net,
    optimizer_state=...), path)`), `net` a model where it is saved (or `'optimizer': self.optimizer`,
    an attribute named like a model or an optimizer, where the load reads that very entry back), when what this load
    returns is read for an entry of that dict (`data["net"]`, `data["optimizer_state"]`): the
    load reads a module pickled whole.  None otherwise."""
    holder = analysis.parents.get(call)
    if not (isinstance(holder, ast.Assign) and len(holder.targets) == 1 and isinstance(holder.targets[0], ast.Name)):
        return None
    read = _keys_read(analysis.context(call).function.node, holder)
    if not read:
        return None
    for entries, saving in _saved_dicts(analysis):
        keys = {key for _, key, _ in entries}
        if not read & keys or not (read - _WEIGHT_KEYS) & keys:
            continue  # only entries every checkpoint has in common say nothing of which file it is
        roles = analysis.roles_for(saving)
        for where, key, value in entries:
            kind = _attribute_object(value) if key in read else None
            if kind is not None:  # `'optimizer': self.optimizer`, read back by this load as `ckpt["optimizer"]`
                return where, key, node_text(analysis.lines, value), kind
            if not isinstance(value, ast.Name) or _bound_to_plain_data(analysis, saving, value.id):
                continue
            # a global the saving function reads (`'net': net` in mixup-cifar10's `checkpoint()`)
            # is a model by its name alone only where the load reads that very entry back
            if roles.is_model(value.id) or key in read and _names_a_model(analysis, saving, value.id):
                return where, key, value.id, "a module"
    return None


def _attribute_object(value: ast.AST) -> str | None:
    """`self.model`, `self.optimizer`: an attribute of the object saving it named like a model
    or an optimizer, and not a `state_dict()` of one (that is a call): the object itself,
    pickled whole.  What it is, or None."""
    from torch_lsp.roles import MODEL_NAME, OPTIMIZER_NAME

    if not (isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id == "self"):
        return None
    if value.attr in _SETTINGS_NAMES:
        return None  # `self.opt` is as often the parsed options as an optimizer
    if MODEL_NAME.match(value.attr) is not None:
        return "a module"
    if OPTIMIZER_NAME.match(value.attr) is not None:
        return "an optimizer"
    return None


def _bound_to_plain_data(analysis: "Analysis", at: ast.AST, name: str) -> bool:
    """Every binding of `name` in the function around `at` is a dict display or a
    `state_dict()` (`model_states = {"net": self.net.state_dict()}`, Beta-VAE): what it holds
    is plain data `weights_only=True` loads, however it is named."""
    bindings = analysis.roles_for(at).assignments.get(name, ())
    return bool(bindings) and all(
        _dict_display(analysis, a.value) or isinstance(a.value, ast.Call) and call_name(a.value) == "state_dict"
        for a in bindings)


# What a plain dict answers to: `config.get("lr")` does not show an object with attributes.
_DICT_METHODS = {"get", "items", "keys", "values", "copy", "update", "pop", "setdefault"}


def _used_as_object(scope: ast.AST, name: "str | ast.Attribute") -> bool:
    """`args.output_dir`, `config.MODEL.RESUME`: read by attribute, so an object (a
    `Namespace`, a config node), not a plain dict `weights_only=True` would load
    (`config = {k: globals()[k] for k in keys}` is never so read); so too for an attribute
    holding the settings, `self.args.save_every`."""
    if isinstance(name, ast.Attribute):
        held = node_key(name)
        return any(isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)
                   and node_key(node.value) == held and node.attr not in _DICT_METHODS for node in ast.walk(scope))
    return any(isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == name
               and node.attr not in _DICT_METHODS for node in ast.walk(scope))


def _settings_attribute(value: ast.AST) -> bool:
    """`self.args`, `self.cfg`: the parsed arguments or config a trainer object keeps."""
    return isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id == "self" \
        and value.attr in _SETTINGS_NAMES


def _keys_read(scope: ast.AST, binding: ast.Assign) -> set[str]:
    """String keys read in `scope` from the name `binding` binds, after it and before the next
    binding of that name that can follow it (not one in the other branch of an `if`, as in `if
    cuda: ckpt = torch.load(p)` / `else: ckpt = torch.load(p, map_location=...)`):
    `name["optimizer"]`, `"epoch" in name`."""
    name = binding.targets[0].id
    rebound = [n.lineno for n in ast.walk(scope) if isinstance(n, ast.Assign) and n.lineno > binding.lineno
               and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)
               and not _other_branches(scope, binding, n)]
    until = min(rebound, default=float("inf"))
    found = set()
    for node in ast.walk(scope):
        if not binding.end_lineno < getattr(node, "lineno", 0) < until:
            continue
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == name \
                and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            found.add(node.slice.value)
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)) \
                and isinstance(node.left, ast.Constant) and isinstance(node.left.value, str) \
                and isinstance(node.comparators[0], ast.Name) and node.comparators[0].id == name:
            found.add(node.left.value)
    return found


def _other_branches(scope: ast.AST, first: ast.AST, second: ast.AST) -> bool:
    """`first` and `second` sit in the two branches of one `if` in `scope`: one never follows the other."""
    def within(statements: list[ast.stmt], node: ast.AST) -> bool:
        return any(node is inner for stmt in statements for inner in ast.walk(stmt))

    return any(isinstance(node, ast.If) and (within(node.body, first) and within(node.orelse, second)
                                             or within(node.orelse, first) and within(node.body, second))
               for node in ast.walk(scope))


def _saved_dicts(analysis: "Analysis") -> list[tuple[list[tuple[ast.AST, str, ast.AST]], ast.Call]]:
    """(entries, the call saving them): the dicts the file hands to `torch.save` or to a saving
    helper (a call whose name has `save` in it) as the first argument, directly or through a
    name bound to one in the same function; a dict literal or `dict(net=net, ...)`.  Each entry
    is (where its key is written, the key, the value); keys that are not plain strings are left out."""

    found = []
    for call in analysis.calls:
        if not call.args or not (analysis.call_qualname(call) == "torch.save" or "save" in (call_name(call) or "")):
            continue
        first = call.args[0]
        values = [first] if _dict_display(analysis, first) else [
            a.value for a in analysis.roles_for(call).assignments.get(first.id, ())
            if _dict_display(analysis, a.value)] if isinstance(first, ast.Name) else []
        found += [(_entries(value), call) for value in values]
        if values and isinstance(first, ast.Name):
            filled = _filled_entries(analysis, call, first.id)
            if filled:
                found.append((filled, call))
    return found


def _filled_entries(analysis: "Analysis", saving: ast.Call, name: str) -> list[tuple[ast.AST, str, ast.AST]]:
    """`package = {}`, then `package["state"] = ...`, `package["args"] = self.args` and
    `torch.save(package, path)`: the entries the saving function writes into the dict it
    saves, before the save (demucs' solver), as `_entries` gives them."""
    scope = analysis.context(saving).function.node
    return [(node.targets[0], node.targets[0].slice.value, node.value) for node in ast.walk(scope)
            if isinstance(node, ast.Assign) and node.lineno < saving.lineno and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Subscript) and isinstance(node.targets[0].value, ast.Name)
            and node.targets[0].value.id == name and isinstance(node.targets[0].slice, ast.Constant)
            and isinstance(node.targets[0].slice.value, str)]


def _dict_display(analysis: "Analysis", value: ast.AST | None) -> bool:
    return isinstance(value, ast.Dict) or isinstance(value, ast.Call) and isinstance(value.func, ast.Name) \
        and value.func.id == "dict" and not value.args and "dict" not in analysis.imports


def _entries(value: ast.Dict | ast.Call) -> list[tuple[ast.AST, str, ast.AST]]:
    if isinstance(value, ast.Dict):
        return [(k, k.value, v) for k, v in zip(value.keys, value.values)
                if isinstance(k, ast.Constant) and isinstance(k.value, str)]
    return [(kw, kw.arg, kw.value) for kw in value.keywords if kw.arg is not None]


def _names_a_model(analysis: "Analysis", at: ast.AST, name: str) -> bool:
    """`name` is a model where `at` reads it, or is named like one (`GMF_model = torch.load(p)`,
    `torch.save(model, p)` at module level, where a name's convention alone gives no role)
    and never read as a mapping there (`model["optim"] = None`, `"params" in net`,
    `crt_net.items()` show a checkpoint or state dict):
    enough to choose which advice the finding gives, never whether there is a finding."""
    from torch_lsp.roles import MODEL_NAME

    if analysis.roles_for(at).is_model(name):
        return True
    scope = analysis.context(at).function.node
    return MODEL_NAME.match(name) is not None and not any(_read_as_mapping(node, name) for node in ast.walk(scope))


# What a loaded state dict answers to and a module does not: `crt_net.items()`, `ori_net.keys()`.
_MAPPING_METHODS = {"items", "keys", "values", "get"}


def _read_as_mapping(node: ast.AST, name: str) -> bool:
    """`name["optim"]`, `"params" in name`, `name.items()`: `name` holds a dict (a checkpoint
    or state dict), not a module."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == name:
        return isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)):
        return isinstance(node.left, ast.Constant) and isinstance(node.left.value, str) \
            and isinstance(node.comparators[0], ast.Name) and node.comparators[0].id == name
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MAPPING_METHODS \
        and isinstance(node.func.value, ast.Name) and node.func.value.id == name


# Methods only a module has: calling one on what `torch.load` returned shows a pickled module.
# `flatten_parameters` is an RNN module's (`model.flatten_parameters()` after loading a seq2seq model).
_MODULE_METHODS = {"eval", "train", "parameters", "named_parameters", "modules", "named_modules", "children",
                   "state_dict", "load_state_dict", "zero_grad", "flatten_parameters"}


# Moves that hand back what they are called on, a module as a tensor: what the load gives is
# followed through them to its binding (the evidence of a module is still asked of its uses).
# `.eval()`/`.train()` are that evidence themselves.
_MOVES = MODULE_MOVES - _MODULE_METHODS


# Types a weights-only load gives back: a check against one of them says nothing of pickled objects.
_WEIGHTS_ONLY_TYPES = {"dict", "list", "tuple", "set", "str", "int", "float", "bool", "bytes", "OrderedDict",
                       "Mapping", "MutableMapping", "Sequence", "Tensor", "Parameter", "Number", "type"}


def _checked_as_object(analysis: "Analysis", call: ast.Call) -> tuple[ast.Call, str] | None:
    """`obj = torch.load(f)` that the function then requires to be an instance of a class a
    weights-only load never gives (`assert isinstance(obj, cls)`, or `if not isinstance(obj,
    Vocab): raise ...`): the file holds a pickled object.  The `isinstance` call and the
    class's text; None when nothing requires it."""
    holder = analysis.parents.get(call)
    loaded = _bound_name(holder)
    if loaded is None:
        return None
    for stmt in analysis.context(call).function.statements:
        if stmt.lineno <= holder.lineno:
            continue
        if isinstance(stmt, ast.Assert):
            test = stmt.test
        elif (isinstance(stmt, ast.If) and isinstance(stmt.test, ast.UnaryOp) and isinstance(stmt.test.op, ast.Not)
              and stmt.body and isinstance(stmt.body[0], ast.Raise)):
            test = stmt.test.operand
        else:
            continue
        if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance"
                and len(test.args) == 2 and isinstance(test.args[0], ast.Name) and test.args[0].id == loaded):
            continue
        kinds = test.args[1].elts if isinstance(test.args[1], ast.Tuple) else [test.args[1]]
        names = [kind.id if isinstance(kind, ast.Name) else kind.attr if isinstance(kind, ast.Attribute) else None
                 for kind in kinds]
        if names and all(n is not None and n not in _WEIGHTS_ONLY_TYPES for n in names):
            return test, node_text(analysis.lines, test.args[1])
    return None


def _bound_name(holder: ast.AST | None) -> str | None:
    """The one name a statement binds what it computes to: `obj = ...`, or `obj: T = ...`."""
    if isinstance(holder, ast.Assign) and len(holder.targets) == 1 and isinstance(holder.targets[0], ast.Name):
        return holder.targets[0].id
    if isinstance(holder, ast.AnnAssign) and holder.value is not None and isinstance(holder.target, ast.Name):
        return holder.target.id
    return None


def _bindings_from(function, call: ast.Call, bound: str) -> list[ast.Assign]:
    """The assignments after the load (bound to `bound`) that bind what it returned, an entry
    of it or a move of those (`decoder = checkpoint["decoder"]`, `decoder = decoder.to(device)`)."""
    names, bindings = {bound}, []
    for stmt in function.statements:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            value = stmt.value
            while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
                value = value.func.value
            if isinstance(value, ast.Subscript):
                value = value.value
            if isinstance(value, ast.Name) and value.id in names and stmt.lineno > call.lineno:
                names.add(stmt.targets[0].id)
                bindings.append(stmt)
    return bindings


def _entry_of_built_object(analysis: "Analysis", call: ast.Call) -> tuple[str, ast.AST, str] | None:
    """`model = checkpoint["model"]` after `checkpoint = torch.load(path)`, where the function's
    other path builds that name (`model = SSD300(...)`, `optimizer = torch.optim.SGD(...)`): the
    entry is that object, pickled whole.  The name, its construction and what it is; None
    when no entry's name is built elsewhere."""
    from torch_lsp.roles import constructed_kind

    bound = _bound_name(analysis.parents.get(call))
    if bound is None:
        return None
    function = analysis.context(call).function
    roles = analysis.roles_for(call)
    for binding in _bindings_from(function, call, bound):
        if not isinstance(binding.value, ast.Subscript):
            continue  # a move of a name bound already, not an entry
        name = binding.targets[0].id
        for other in roles.assignments.get(name, ()):
            kind = constructed_kind(analysis, other.value) if other.value is not None else None
            if other.statement is not binding and kind in ("model", "optimizer"):
                return name, other.value, "a module" if kind == "model" else "an optimizer"
    return None


def _loaded_module_use(analysis: "Analysis", call: ast.Call) -> ast.AST | None:
    """Where what this `torch.load` returns is used as a module: called, or given a module
    method (also after a move, `vocoder.cuda().eval()`), itself, an entry of it
    (`decoder = checkpoint["decoder"]`, `vocoder = torch.load(path)["model"]`,
    `ckpt["model"].float().state_dict()`; a load in a conditional expression,
    `torch.load(p) if isinstance(p, str) else p`, counts as bound) or a
    rebinding of that (`decoder = decoder.to(device)`), there or in a function of the file it
    is handed to (`generate(decoder, ...)` calls its parameter); or, for a load returned or bound to a model name, a
    `torch.save` of a model object in the file (it pickles whole modules).  None when
    nothing says so."""

    holder = analysis.parents.get(call)
    if isinstance(holder, ast.Subscript) and holder.value is call:  # `torch.load(path)["model"]`
        holder = analysis.parents.get(holder)
    if isinstance(holder, ast.IfExp) and holder.test is not call:  # `torch.load(p) if isinstance(p, str) else p`
        holder = analysis.parents.get(holder)
    while isinstance(holder, ast.Attribute) and holder.attr in _MOVES:  # `torch.load(p)["model"].to(device)`
        moved = analysis.parents.get(holder)
        if not (isinstance(moved, ast.Call) and moved.func is holder):
            break
        holder = analysis.parents.get(moved)
    bound = _bound_name(holder)
    handed_on = isinstance(holder, ast.Return) or (bound is not None and _names_a_model(analysis, call, bound))
    if handed_on:  # `return torch.load(path)`, `model = torch.load(path)` in a file that saves whole models
        saved = next((c for c in analysis.calls_to("torch.save") if c.args and isinstance(c.args[0], ast.Name)
                      and _names_a_model(analysis, c, c.args[0].id)), None)
        if saved is not None:
            return saved
    if isinstance(holder, ast.Attribute) and holder.attr in _MODULE_METHODS:
        return holder
    if bound is None:
        return None
    function = analysis.context(call).function
    names = {bound} | {stmt.targets[0].id for stmt in _bindings_from(function, call, bound)}
    used = _used_as_module(function.node, names, call.lineno)
    if used is not None:
        return used
    for node in ast.walk(function.node):  # `generate(decoder, ...)`, a function of the file that runs its parameter
        if not (isinstance(node, ast.Call) and node.lineno > call.lineno and isinstance(node.func, ast.Name)):
            continue
        for callee in analysis.function_named(node.func.id):
            if callee.is_method:
                continue
            params = [a.arg for a in callee.node.args.posonlyargs + callee.node.args.args]
            positional = list(itertools.takewhile(lambda a: not isinstance(a, ast.Starred), node.args))
            given = [params[i] for i, a in enumerate(positional[:len(params)])
                     if isinstance(a, ast.Name) and a.id in names]
            given += [k.arg for k in node.keywords if k.arg in params and isinstance(k.value, ast.Name)
                      and k.value.id in names]
            used = _used_as_module(callee.node, set(given), callee.node.lineno) if given else None
            if used is not None:
                return used
    return None


# Module classes a weights-only load never gives back: testing what was loaded against one
# (`isinstance(model, nn.DataParallel)`, to unwrap `.module`) shows a pickled module.
_MODULE_CLASSES = {"Module", "DataParallel", "DistributedDataParallel", "FullyShardedDataParallel"}


def _tested_as_module(call: ast.Call, names: set[str]) -> bool:
    """`isinstance(name, <module class>)` (or a tuple of them) for one of `names`."""
    if not (isinstance(call.func, ast.Name) and call.func.id == "isinstance" and len(call.args) == 2
            and isinstance(call.args[0], ast.Name) and call.args[0].id in names):
        return False
    kinds = call.args[1].elts if isinstance(call.args[1], ast.Tuple) else [call.args[1]]
    return all((k.attr if isinstance(k, ast.Attribute) else k.id if isinstance(k, ast.Name) else None)
               in _MODULE_CLASSES for k in kinds)


# Moves a module makes in place but a tensor only returns: `policy.cuda()` as a statement of
# its own (the result dropped) moves a module; on a tensor it would do nothing.
_IN_PLACE_MOVES = {"to", "cuda", "cpu", "float", "half", "double"}


def _used_as_module(scope: ast.AST, names: set[str], after: int) -> ast.AST | None:
    """A call of one of `names` in `scope` after line `after`, a module method called on one,
    or one moved by a statement that drops the result (`policy.cuda()`: only a module moves
    itself in place)."""
    for node in ast.walk(scope):
        if isinstance(node, ast.Expr) and node.lineno > after and isinstance(node.value, ast.Call) \
                and isinstance(node.value.func, ast.Attribute) and node.value.func.attr in _IN_PLACE_MOVES:
            target = node.value.func.value
            if isinstance(target, ast.Subscript):
                target = target.value  # `snapshot["policy"].cuda()`: an entry is the module
            if isinstance(target, ast.Name) and target.id in names:
                return node.value
        if not isinstance(node, ast.Call) or node.lineno <= after:
            continue
        if isinstance(node.func, ast.Name) and node.func.id in names:
            return node  # `out = model(x)`: what was loaded is run
        if _tested_as_module(node, names):
            return node  # `if isinstance(model, nn.DataParallel): model = model.module`
        if isinstance(node.func, ast.Attribute) and call_name(node) in _MODULE_METHODS:
            target = node.func.value
            while isinstance(target, ast.Call) and isinstance(target.func, ast.Attribute):
                target = target.func.value  # `vocoder.cuda().eval()`: the method of what was moved
            if isinstance(target, ast.Subscript):
                target = target.value  # `ckpt["model"].float().state_dict()`: an entry is the module
            if isinstance(target, ast.Name) and target.id in names:
                return node
    return None

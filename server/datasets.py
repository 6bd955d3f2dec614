"""What a `DataLoader` loads: is there loading work for worker processes, and where its batches go.

TL405 asks for `num_workers` and `pin_memory`; both only pay off when the dataset does work per
item (reads a file, decodes, runs a transform) and the batches then travel to a GPU.  This module
answers, for one `DataLoader(...)` call:

- `dataset_without_loading_work`: the dataset holds its data in memory (`TensorDataset`, a class
  whose `__getitem__` only indexes attributes, reorders them or builds random tensors, or applies a
  stored transform that is only flips and `Normalize` for this construction, a tensor, a
  Python list of samples built before the loader sees it; also read back by key from a dict that
  a loop over literal split names filled, `datasets[split] = TensorDataset(...)`; also what a
  factory of the file or a project file returns when every `return` of it is such a dataset), or it is an
  `IterableDataset` that reads live state of the main process (a replay buffer, a bound method of
  the model): workers would iterate stale forked copies; or it holds one open file that
  `__getitem__` seeks in (workers would share its offset and mix up records); or its
  `__getitem__` samples from a NumPy generator the dataset stores (`self.rng.choice(...)`):
  each forked worker would replay the same random stream.
  The dataset class is looked up in the file, then in the workspace file its import names
  (beside the importer, in its parent folders, or a `src/` folder there).
- `batches_made_on_device`: the dataset's `__getitem__` or the loader's `collate_fn` moves what it
  returns to the GPU: worker processes cannot use CUDA after a fork, CUDA tensors cannot be pinned.
- `read_once`: the loader is only ever read through `next(iter(loader))` (or its dunder spelling,
  or a loop that breaks after a known few batches), besides reads that only look at it
  (`len(loader)`, a notebook cell displaying it), or never read where no importer could read it.
- `batches_reach_gpu`: a batch the loader yields is moved to an accelerator and fed to a model
  (None when the loader is not iterated where it is built: the caller decides from the file).
"""
from __future__ import annotations

import ast
import re
from functools import partial
from typing import TYPE_CHECKING

from torch_lsp.fact_cache import FactKey
from torch_lsp.notebooks import is_notebook_program
from torch_lsp.syntax_index import syntax_index
from torch_lsp.roles import DEVICE_NAME, reaching_assignment
from torch_lsp.syntax_nodes import argument, call_name, has_star_args, is_main_guard, is_self_attribute, keyword, walk_nodes
from torch_lsp.workspace_files import workspace_analysis

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis, FunctionInfo

_IN_MEMORY_DATASETS = {
    "torch.utils.data.TensorDataset", "torch.utils.data.dataset.TensorDataset",
    # torchrec's synthetic recommendation batches: generated up front and cycled (nothing to load).
    "torchrec.datasets.random.RandomRecDataset", "torchrec.datasets.RandomRecDataset",
}
_VIEWS_OF_A_DATASET = {"torch.utils.data.random_split", "torch.utils.data.Subset",
                       "torch.utils.data.dataset.random_split", "torch.utils.data.dataset.Subset"}
# Calls a `__getitem__` may make without doing loading work: sizes, conversions, random tensors.
_CHEAP_CALLS = {"len", "int", "float", "min", "max", "range", "slice", "tuple", "list", "dict", "zip",
                "long", "view", "reshape", "clone", "unsqueeze", "squeeze", "detach", "contiguous",
                "tensor", "as_tensor", "from_numpy", "rand", "randn", "randint", "zeros", "ones", "full",
                "arange", "manual_seed", "Generator", "stack", "item", "size", "numel", "dim",
                "flip", "roll", "permute", "transpose"}  # reordering a stored row is no loading work
# `self.model(x)`, `net(x)`, `model.forward(x)`: a call that runs a model on the batch.
_MODEL_CALLEE = re.compile(r"(?i)(model|net|encoder|forward)")


def dataset_without_loading_work(analysis: "Analysis", loader: ast.Call) -> bool:
    """The loader's dataset has nothing for workers to do (see the module docstring): every
    value the dataset argument may hold is known, and none does loading work."""
    values = list(_dataset_values(analysis, argument(loader, 0, "dataset"), loader, depth=0))
    return bool(values) and all(_holds_data_in_memory(analysis, value, loader) for value in values)


def _holds_data_in_memory(analysis: "Analysis", value: ast.AST | None, loader: ast.Call, depth: int = 0) -> bool:
    if _built_list(analysis, value):
        # A Python list of samples (precomputed features, pairs of tensors) was built before the
        # loader sees it: batches only index it, unless a `collate_fn` loads each batch.
        return keyword(loader, "collate_fn") is None
    if not isinstance(value, ast.Call):
        return False
    if analysis.call_qualname(value) in _IN_MEMORY_DATASETS:
        return True
    if _made_tensor(analysis, value, depth=0):
        # Batches of a tensor's rows (node indices, say) are slices of memory, unless a
        # `collate_fn` turns each batch of indices into loaded data.
        return keyword(loader, "collate_fn") is None
    cls = _dataset_class(analysis, value)
    if cls is not None:
        return (_indexes_memory(cls) or _iterates_memory(cls) or _iterates_live_state(cls)
                or _seeks_shared_file(cls) or _draws_from_stored_generator(analysis, cls)
                or _indexes_memory_with_cheap_transforms(analysis, cls, value))
    return _factory_returns_in_memory(analysis, value, loader, depth)


def _factory_returns_in_memory(analysis: "Analysis", call: ast.Call, loader: ast.Call, depth: int) -> bool:
    """`call` runs one function of the file or of a project file (`datasets.get_dataset(name)`)
    whose every `return` hands back a dataset holding its data in memory, also through the
    project's own factories it returns the result of (`return moons_dataset(n)`, which returns
    `TensorDataset(torch.from_numpy(X))`)."""
    from torch_lsp.analysis import functions_called

    if depth > 3:
        return False
    found = functions_called(analysis, call)
    if len(found) != 1:
        return False
    owner, function = found[0]
    returns = [stmt for stmt in function.statements if isinstance(stmt, ast.Return)]
    if function.is_module or not returns or any(ret.value is None for ret in returns):
        return False
    for ret in returns:
        values = list(_dataset_values(owner, ret.value, ret, depth=0))
        if not values or not all(_holds_data_in_memory(owner, value, loader, depth + 1) for value in values):
            return False
    return True


def _made_tensor(analysis: "Analysis", value: ast.AST | None, depth: int) -> bool:
    """`value` is a tensor built in memory: a `torch.*` function's result (`torch.arange(n)`,
    `torch.randperm(n)`), the indices `mask.nonzero()` finds, or a view or piece of such a
    tensor (`.view(-1)`, `.split(k)[rank]`), also through the names it is bound to."""
    if depth > 6:
        return False
    if isinstance(value, ast.Subscript):
        return _made_tensor(analysis, value.value, depth + 1)
    if isinstance(value, ast.Name):
        assignment = reaching_assignment(analysis, value)
        return assignment is not None and _made_tensor(analysis, assignment.value, depth + 1)
    if not isinstance(value, ast.Call):
        return False
    name = call_name(value) or ""
    qualname = analysis.call_qualname(value) or ""
    if qualname.startswith("torch.") and qualname.count(".") == 1:
        return (name[:1].islower() and name not in _NOT_TENSOR_FUNCTIONS) or name in _LEGACY_TENSOR_TYPES
    if not isinstance(value.func, ast.Attribute) or qualname:
        return False
    if name == "nonzero":
        return True  # only tensors and arrays have it; both hold their data in memory
    return name in _TENSOR_PIECES and _made_tensor(analysis, value.func.value, depth + 1)


def _built_list(analysis: "Analysis", value: ast.AST | None) -> bool:
    """`[(f, l) for f, l in pairs]` or `list(zip(inputs, labels))` (the builtin `list`): a list
    whose items exist in memory once it is built."""
    if isinstance(value, ast.ListComp):
        return True
    return (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "list"
            and "list" not in analysis.imports and not analysis.function_named("list"))


# Methods that return a view or a piece of the tensor they are called on (or a cast of it).
_TENSOR_PIECES = {"view", "reshape", "flatten", "squeeze", "unsqueeze", "split", "chunk", "tensor_split", "narrow",
                  "long", "int", "contiguous", "clone", "detach", "t", "type", "float", "double"}
# `torch.*` functions whose result is no tensor to batch.
_NOT_TENSOR_FUNCTIONS = {"load", "device", "compile", "no_grad", "manual_seed", "Generator"}
# `torch.Tensor(x)`, `torch.FloatTensor(x)`: legacy constructors, a tensor built in memory.
_LEGACY_TENSOR_TYPES = {"Tensor", "FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor",
                        "ShortTensor", "ByteTensor", "BoolTensor"}


def dataset_fits_one_batch(analysis: "Analysis", loader: ast.Call) -> bool:
    """`DataLoader(SDFDataset(path, size=1), batch_size=1)`: every value the dataset argument may
    hold constructs a class (of the file or a project file) whose `__len__` returns a literal or an
    attribute `__init__` sets from one of its parameters and nothing else rebinds, and the
    construction's literal length is at most the loader's literal `batch_size` (default 1): one
    batch per pass, so workers have no later batch to prepare.  A sampler decides the length
    itself: not followed."""
    if any(keyword(loader, name) is not None for name in ("sampler", "batch_sampler")):
        return False
    size = argument(loader, 1, "batch_size")
    batch = 1 if size is None else (size.value if isinstance(size, ast.Constant) and type(size.value) is int else None)
    if batch is None:
        return False
    values = list(_dataset_values(analysis, argument(loader, 0, "dataset"), loader, depth=0))
    if not values:
        return False
    for value in values:
        if not isinstance(value, ast.Call):
            return False
        cls = _dataset_class(analysis, value)
        length = _constructed_length(cls, value) if cls is not None else None
        if length is None or length > batch:
            return False
    return True


def _constructed_length(cls: ast.ClassDef, construction: ast.Call) -> int | None:
    """The length `construction` gives an instance of `cls`, when `__len__` is one `return` of a
    literal int or of `self.<attr>` that only `__init__` binds, once, to one of its parameters,
    and the construction passes that parameter (or leaves its default) as a literal int."""
    methods = _methods(cls)
    length = methods.get("__len__")
    if length is None or len(length.body) != 1 or not isinstance(length.body[0], ast.Return):
        return None
    returned = length.body[0].value
    if isinstance(returned, ast.Constant) and type(returned.value) is int:
        return returned.value
    if not (returned is not None and is_self_attribute(returned)):
        return None
    init = methods.get("__init__")
    if init is None or init.args.vararg or init.args.kwarg:
        return None
    stores = [node for method in methods.values() for node in walk_nodes(method)
              if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del))
              and is_self_attribute(node) and node.attr == returned.attr]
    if len(stores) != 1:
        return None
    store = stores[0]
    assign = next((n for n in walk_nodes(init) if isinstance(n, ast.Assign) and store in n.targets), None)
    if assign is None or assign not in init.body or not isinstance(assign.value, ast.Name):
        return None
    positional = [a.arg for a in [*init.args.posonlyargs, *init.args.args]][1:]
    parameter = assign.value.id
    if any(isinstance(n, ast.Name) and n.id == parameter and isinstance(n.ctx, ast.Store) for n in walk_nodes(init)):
        return None
    if has_star_args(construction):
        return None
    given = keyword(construction, parameter)
    value = given.value if given is not None else None
    if value is None and parameter in positional and positional.index(parameter) < len(construction.args):
        value = construction.args[positional.index(parameter)]
    if value is None:
        defaults = dict(zip(positional[len(positional) - len(init.args.defaults):], init.args.defaults))
        defaults.update({a.arg: d for a, d in zip(init.args.kwonlyargs, init.args.kw_defaults) if d is not None})
        value = defaults.get(parameter)
        if value is None:
            return None
    return value.value if isinstance(value, ast.Constant) and type(value.value) is int else None


def batches_made_on_device(analysis: "Analysis", loader: ast.Call) -> bool:
    """The loader's `collate_fn`, or the dataset's `__getitem__` / `__iter__`, moves what it
    returns to the GPU (`.to(device)`, `.cuda()`): worker processes cannot use CUDA after a
    fork and CUDA tensors cannot be pinned, so neither `num_workers` nor `pin_memory` fits."""
    collate = keyword(loader, "collate_fn")
    if collate is not None:
        return _collate_moves_to_device(analysis, collate.value, loader)
    values = list(_dataset_values(analysis, argument(loader, 0, "dataset"), loader, depth=0))
    classes = [_dataset_class(analysis, v, nested=True) if isinstance(v, ast.Call) else None for v in values]
    return bool(classes) and all(cls is not None and _items_moved_to_device(cls) for cls in classes)


def _items_moved_to_device(cls: ast.ClassDef) -> bool:
    methods = _methods(cls)
    produce = methods.get("__getitem__") or methods.get("__iter__")
    return produce is not None and any(_moved_to_device(n, ()) for n in walk_nodes(produce))


def _collate_moves_to_device(analysis: "Analysis", value: ast.AST, loader: ast.Call, depth: int = 0) -> bool:
    """`collate_fn=collate` or `partial(collate, device=device)` (also through a name bound
    to either in the loader's function, every binding so) whose function of the file moves
    the batch: `.cuda()`, or `.to(...)` a device that is not a parameter left at its default
    (`def collate(batch, device="cpu")` handed in bare moves nothing)."""
    bound = analysis.roles_for(analysis.context(loader).function).assignments.get(value.id, ()) \
        if isinstance(value, ast.Name) and depth < 3 else ()
    if bound:  # a local binding shadows a function of the file so named
        values = [a.value for a in bound if not a.unpacked and a.value is not None]
        return len(values) == len(bound) and all(_collate_moves_to_device(analysis, v, loader, depth + 1) for v in values)
    passed: tuple[str, ...] = ()
    if isinstance(value, ast.Call) and call_name(value) == "partial" and value.args:
        passed = tuple(kw.arg for kw in value.keywords if kw.arg is not None and not _cpu_string(kw.value))
        value = value.args[0]
    if not isinstance(value, ast.Name):
        return False
    functions = analysis.function_named(value.id)
    return bool(functions) and all(
        any(_moved_to_device(n, tuple(p for p in f.params if p not in passed)) for n in walk_nodes(f.node))
        for f in functions)


def _moved_to_device(node: ast.AST, defaulted: tuple[str, ...]) -> bool:
    """`x.cuda()`, `x.to(device)`, `x.to("cuda")`, `x.to(self.device)`: not a dtype, not `"cpu"`,
    not a parameter named in `defaulted` (left at its default by the caller)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return False
    if node.func.attr == "cuda":
        return True
    target = argument(node, 0, "device") if node.func.attr == "to" else None
    if isinstance(target, ast.Constant):
        return isinstance(target.value, str) and target.value.split(":")[0] == "cuda"
    if isinstance(target, ast.Name):
        return target.id not in defaulted and bool(DEVICE_NAME.match(target.id))
    return isinstance(target, ast.Attribute) and bool(DEVICE_NAME.match(target.attr))


def _cpu_string(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value == "cpu"


def read_once(analysis: "Analysis", loader: ast.Call) -> bool:
    """`next(iter(DataLoader(...)))`, or a loader name never iterated past a batch: each read
    of this binding takes one batch (`next(iter(loader))`, also spelled
    `loader.__iter__().__next__()`, or a `for` over it that breaks after its first batch or a
    known few) or
    only looks at the loader (`len(loader)`, its `.dataset`, a notebook cell displaying it, an
    f-string); a binding nothing reads loads nothing at all, where no importing module can read
    it either: in a notebook (a settings cell's test loader no later cell uses), a function's
    local, or a name bound under `if __name__ == "__main__":` (a dataset file's self-test)."""
    if _read_by_one_next(analysis, loader):
        return True
    name = _assigned_name(analysis, loader)
    if name is None:
        return False
    function = analysis.context(loader).function
    uses = _reads_of_binding(analysis, function, name, analysis.statement_of(loader))
    if not uses:  # a notebook is the whole program; a script's loader may be read by a module importing it
        if _declared_global(function, name):
            return False  # `global shared_loader`: bound for other functions and cells, in a notebook too
        return is_notebook_program(analysis) or _no_importer_reads(analysis, function, name, loader)
    return all(_read_by_one_next(analysis, n) or _iterator_advanced_once(analysis, function, n)
               or _first_batch_only(analysis, n) or _only_looks_at(analysis, n) for n in uses)


def dataset_self_test(analysis: "Analysis", loader: ast.Call) -> bool:
    """A dataset or sampler module's self-test: the loader is built under
    `if __name__ == "__main__":` over a dataset of a class this file defines (`dst =
    ADE20KLoader(path)`, then `DataLoader(dst, batch_size=4)`, pytorch-semseg's loader modules),
    or with a sampler of one (`sampler = TasksetSampler(taskset)`, then `DataLoader(dataset,
    batch_sampler=sampler)`), and the loops over it train nothing and move no batch to a GPU:
    a look at some samples (plotted, printed, stepped through in a debugger), whose loading
    speed nobody waits on."""
    if not any(in_body and is_main_guard(stmt.test) for stmt, in_body in analysis.context(loader).guards):
        return False
    tested = (argument(loader, 0, "dataset"), argument(loader, 3, "sampler"), argument(loader, 4, "batch_sampler"))
    if not any(_built_by_file_class(analysis, loader, node) for node in tested):
        return False
    loops = _loops_over_loader(analysis, loader)
    if not loops or any(_loop_moves_model_input(analysis, node) for node in loops):  # `batches_reach_gpu`
        return False
    for node in loops:
        loop = analysis.loop_by_node(node)
        if loop is None or analysis.backward_calls(loop) or analysis.optimizer_steps(loop):
            return False
    return True


def _built_by_file_class(analysis: "Analysis", at: ast.AST, node: ast.AST | None) -> bool:
    """`node` is a name every binding of which builds an instance of a class this file defines."""
    if not isinstance(node, ast.Name):
        return False
    bindings = analysis.roles_for(at).assignments.get(node.id, ())
    return bool(bindings) and all(isinstance(a.value, ast.Call) and isinstance(a.value.func, ast.Name)
                                  and a.value.func.id in analysis.classes for a in bindings)


def _declared_global(function: "FunctionInfo", name: str) -> bool:
    """A function declares `name` `global` or `nonlocal`: its binding outlives the call."""
    return not function.is_module and any(isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names
                                          for node in ast.walk(function.node))


def _no_importer_reads(analysis: "Analysis", function: "FunctionInfo", name: str, loader: ast.Call) -> bool:
    """A binding nothing in the file reads that no importing module can read either: a
    function's local (not declared `global`/`nonlocal`), or a name bound under
    `if __name__ == "__main__":` (a self-test block that never runs on import)."""
    if not function.is_module:
        return not _declared_global(function, name)
    return any(in_body and is_main_guard(stmt.test) for stmt, in_body in analysis.context(loader).guards)


FEW_BATCHES = 16  # a one-off pass over this many batches gives workers nothing to prepare ahead


def _first_batch_only(analysis: "Analysis", name: ast.Name) -> bool:
    """`for images, labels in loader:` (or `enumerate(loader)`) whose body ends in an
    unconditional `break`, or in `if i == N - 1: break` on the enumerate counter with `N` a
    known few batches (a literal, or the default of the script's `--n_samples` option), and
    never `continue`s, outside any other loop: a notebook cell that shows the first batch's
    shapes, or a script caching a few samples before it trains."""
    loop = analysis.parents.get(name)
    counter = None
    if isinstance(loop, ast.Call) and isinstance(loop.func, ast.Name) and loop.func.id == "enumerate" \
            and loop.args and loop.args[0] is name and not loop.keywords and len(loop.args) == 1:
        name, loop = loop, analysis.parents.get(loop)
        if isinstance(loop, ast.For) and isinstance(loop.target, ast.Tuple) and loop.target.elts \
                and isinstance(loop.target.elts[0], ast.Name):
            counter = loop.target.elts[0].id
    if not (isinstance(loop, ast.For) and loop.iter is name and loop.body):
        return False
    last = loop.body[-1]
    if not (isinstance(last, ast.Break) or counter is not None and _breaks_after_few(analysis, last, counter)):
        return False
    if any(isinstance(node, ast.Continue) for stmt in loop.body for node in _same_loop_nodes(stmt)):
        return False
    return not analysis.context(loop).loops


def _breaks_after_few(analysis: "Analysis", stmt: ast.stmt, counter: str) -> bool:
    """`if i == N - 1: break` (or `i + 1 == N`, `i >= N - 1`, `i == K`) with no `else`, ending a
    loop body after at most `FEW_BATCHES` batches."""
    if not (isinstance(stmt, ast.If) and not stmt.orelse and len(stmt.body) == 1 and isinstance(stmt.body[0], ast.Break)):
        return False
    test = stmt.test
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.GtE))):
        return False
    left, right = test.left, test.comparators[0]
    if isinstance(left, ast.BinOp) and isinstance(left.op, ast.Add) and isinstance(left.left, ast.Name) \
            and left.left.id == counter and isinstance(left.right, ast.Constant) and left.right.value == 1:
        bound, offset = _known_int(analysis, right), 0  # `i + 1 == N`: N batches
    elif isinstance(left, ast.Name) and left.id == counter:
        offset = 1  # `i == K` (or `i >= K`) at the end of the body stops after K + 1 batches
        if isinstance(right, ast.BinOp) and isinstance(right.op, ast.Sub) and isinstance(right.right, ast.Constant) \
                and right.right.value == 1:
            bound, offset = _known_int(analysis, right.left), 0
        else:
            bound = _known_int(analysis, right)
    else:
        return False
    return bound is not None and 0 < bound + offset <= FEW_BATCHES


def _known_int(analysis: "Analysis", node: ast.AST) -> int | None:
    """An int literal, or `args.n` where the file's only `add_argument("--n", ...)` for that
    destination has an int `default=` (what the script uses unless told otherwise)."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)):
        return None
    defaults = []
    for call in analysis.calls:
        if call_name(call) != "add_argument":
            continue
        dest = keyword(call, "dest")
        names = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        long = [n for n in names if n.startswith("--")] or names
        option = dest.value.value if dest is not None and isinstance(dest.value, ast.Constant) else (
            long[0].lstrip("-").replace("-", "_") if long else None)
        if option == node.attr:
            default = keyword(call, "default")
            defaults.append(default.value.value if default is not None and isinstance(default.value, ast.Constant)
                            and type(default.value.value) is int else None)
    return defaults[0] if len(defaults) == 1 else None


def _same_loop_nodes(node: ast.AST):
    """The nodes of `node` that belong to the loop around it: not those of a nested loop or function."""
    yield node
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            yield from _same_loop_nodes(child)


def _reads_of_binding(analysis: "Analysis", function: "FunctionInfo", name: str, binding: ast.stmt) -> list[ast.Name]:
    """The reads of `name` that may see the value `binding` gives it: not those in a nested
    function where `name` is local (a parameter of the same name), nor those after a later
    unconditional rebinding in the function's own body (a notebook cell that builds the
    loader anew), nor those of the function's own statements that run before `binding`
    (an earlier cell's loop over the loader the name held then)."""
    # The index's names spelled so, not a walk of the function (at module level, the file).
    reads = [n for n in syntax_index(analysis).names_in(name, function.node) if isinstance(n.ctx, ast.Load)]
    body = function.node.body
    start = _body_index(analysis, function, binding)
    rebound = [index for index, stmt in enumerate(body) if start is not None and index > start
               and isinstance(stmt, ast.Assign) and any(_value_for(t, stmt.value, name) for t in stmt.targets)]
    kept = []
    for read in reads:
        inner = analysis.context(read).function
        if inner.node is not function.node and (name in inner.params or _assignments(inner, name)):
            continue
        at = _body_index(analysis, function, read)
        if rebound and at is not None and any(index < at for index in rebound):
            continue
        if inner.node is function.node and at is not None and start is not None and at < start:
            continue  # this statement ran before the binding: it read an earlier value
        kept.append(read)
    return kept


def _body_index(analysis: "Analysis", function: "FunctionInfo", node: ast.AST | None) -> int | None:
    """The place in the function's own body of the statement that holds `node`."""
    stmt = analysis.body_statement(function.node, node) if node is not None else None
    return next((i for i, s in enumerate(function.node.body) if s is stmt), None) if stmt is not None else None


def _only_looks_at(analysis: "Analysis", name: ast.Name) -> bool:
    """`len(loader)`, `loader.dataset`, `loader.batch_size`, the loader shown in an f-string or
    by a statement that is only the name (or a tuple of names: a notebook cell's display)."""
    parent = analysis.parents.get(name)
    if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id == "len":
        return True
    if isinstance(parent, ast.Attribute) and parent.attr in ("dataset", "batch_size"):
        return True
    if isinstance(parent, ast.FormattedValue) or (
            isinstance(parent, ast.Tuple) and isinstance(analysis.parents.get(parent), ast.FormattedValue)):
        return True
    if isinstance(parent, ast.Tuple):
        parent = analysis.parents.get(parent)
    return isinstance(parent, ast.Expr)


def _iterator_advanced_once(analysis: "Analysis", function: "FunctionInfo", use: ast.Name) -> bool:
    """`it = iter(loader)` whose iterator is only advanced outside loops, by `next(it)`,
    `it.next()` or `it.__next__()` (a notebook's cell that shows one batch): a batch or two,
    never an epoch."""
    call = _iterator_made_from(analysis, use)
    if call is None:
        return False
    iterator = _assigned_name(analysis, call)
    if iterator is None:
        return False
    advances = [n for n in ast.walk(function.node) if isinstance(n, ast.Name) and n.id == iterator
                and isinstance(n.ctx, ast.Load)]
    return bool(advances) and all(_advances_once(analysis, n) for n in advances)


def _advances_once(analysis: "Analysis", name: ast.Name) -> bool:
    advance = _advance_of(analysis, name)
    return advance is not None and not analysis.context(advance).loops


def batches_reach_gpu(analysis: "Analysis", loader: ast.Call) -> bool | None:
    """True when a loop over this loader moves a batch to an accelerator and feeds it to a
    model; False when the loader is iterated here and no batch is; None when it is not
    iterated in the function that builds it or in a function of the file it is passed to."""
    loops = _loops_over_loader(analysis, loader)
    if not loops:
        return None
    return any(_loop_moves_model_input(analysis, loop) for loop in loops)


# ------------------------------------------------------------------ the dataset's values
def _dataset_values(analysis: "Analysis", expr: ast.AST | None, at: ast.AST, depth: int):
    """The expressions a dataset argument may come from: through local assignments,
    `random_split`/`Subset`, `self.x` attributes, list and dict literals, the return values of
    functions of the file, and the callers of a parameter.  None for a value not followed."""
    if expr is None or depth > 5:
        yield None
        return
    if isinstance(expr, (ast.List, ast.Tuple, ast.Set)):
        for element in expr.elts:
            yield from _dataset_values(analysis, element, at, depth + 1)
        return
    if isinstance(expr, ast.Dict):
        for element in expr.values:
            yield from _dataset_values(analysis, element, at, depth + 1)
        return
    if isinstance(expr, ast.Subscript):
        stored = _stored_under_key(analysis, expr)
        if stored is not None:
            # `datasets["train"]` after `datasets[split] = TensorDataset(...)` for each split
            yield from _dataset_values(analysis, stored.value, stored, depth + 1)
            return
        yield from _dataset_values(analysis, expr.value, at, depth + 1)
        return
    if isinstance(expr, ast.ListComp):
        yield expr  # a list of samples built in memory
        return
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        # `eights[1000:] + ones[1000:]` (lists joined), `train_set + extra_set` (a ConcatDataset)
        yield from _dataset_values(analysis, expr.left, at, depth + 1)
        yield from _dataset_values(analysis, expr.right, at, depth + 1)
        return
    if isinstance(expr, ast.Call):
        if analysis.call_qualname(expr) in _VIEWS_OF_A_DATASET:
            yield from _dataset_values(analysis, argument(expr, 0, "dataset"), at, depth + 1)
        else:
            yield expr
        return
    function = analysis.context(at).function
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
        from torch_lsp.roles import self_attribute_values

        values = self_attribute_values(analysis, function.class_node).get(expr.attr, []) if function.class_node else []
        if not values:
            yield None
        for value in values:
            yield from _dataset_values(analysis, value, value or at, depth + 1)
        return
    if not isinstance(expr, ast.Name):
        yield None
        return
    lambda_values = _lambda_parameter_values(analysis, expr)
    if lambda_values is not None:
        for value in lambda_values:
            yield from _dataset_values(analysis, value, at, depth + 1)
        return
    before = getattr(at, "lineno", None)
    bound = [(stmt, value) for stmt, value in _assignments(function, expr.id)
             if before is None or stmt.lineno <= before]

    reaching = reaching_assignment(analysis, expr)
    if reaching is not None and any(stmt is reaching.statement for stmt, _ in bound):
        # The binding that surely ran last (in the use's own block): a binding in another
        # branch of an `if` (`ds = load_dataset(...)` there, `TensorDataset` here) never reaches it.
        bound = [(stmt, value) for stmt, value in bound if stmt is reaching.statement]
    if not bound and expr.id not in function.params and not function.is_module:
        # A free name (`train_dataset` of the enclosing scope, a notebook's earlier cell):
        # every value the enclosing scope binds to it, wherever it does.
        bound = _assignments(analysis.context(function.node).function, expr.id)
        if not bound:
            yield None
    for stmt, (value, index) in bound:
        returned = _returned_element(analysis, value, index)
        if returned is not None:
            for element, where in returned:
                yield from _dataset_values(analysis, element, where, depth + 1)
        else:
            yield from _dataset_values(analysis, value, stmt, depth + 1)
    if bound or (expr.id not in function.params and not function.is_module):
        return
    sites = analysis.callers(function) if expr.id in function.params else []
    if not sites:
        yield None
    for site in sites:
        yield from _dataset_values(analysis, analysis.argument_for(site, function, expr.id), site, depth + 1)


def _stored_under_key(analysis: "Analysis", expr: ast.Subscript) -> ast.Assign | None:
    """The store that surely put what `name["key"]` reads: the last `name["key"] = value`, or
    `name[k] = value` directly in the body of `for k in ["train", "valid"]:` (a literal list of
    keys holding "key", no `break`/`continue`), that runs before the read on every path, with
    nothing after it in the function rebinding `name`, calling a method of it or storing into it
    under that key or one not known to differ.  None otherwise."""
    from torch_lsp.roles import dominates

    if not (isinstance(expr.value, ast.Name) and isinstance(expr.slice, ast.Constant)):
        return None
    name, key = expr.value.id, expr.slice.value
    use = analysis.statement_of(expr)
    if use is None:
        return None
    function = analysis.context(expr).function
    found = None
    for stmt in function.statements:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and stmt.lineno < use.lineno):
            continue
        target = stmt.targets[0]
        if not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id == name):
            continue
        holder: ast.stmt = stmt
        if isinstance(target.slice, ast.Constant):
            if target.slice.value != key:
                continue
        elif isinstance(target.slice, ast.Name):
            loop = analysis.parents.get(stmt)
            if not (isinstance(loop, ast.For) and any(s is stmt for s in loop.body) and not loop.orelse
                    and key in _keys_of(analysis, target.slice, stmt)):
                continue
            if any(isinstance(n, (ast.Break, ast.Continue)) for n in ast.walk(loop)) or any(
                    isinstance(n, ast.Name) and n.id == loop.target.id and isinstance(n.ctx, ast.Store)
                    for s in loop.body for n in ast.walk(s)):
                continue
            holder = loop
        else:
            continue
        if dominates(analysis, holder, use) and (found is None or stmt.lineno > found.lineno):
            found = stmt
    if found is None:
        return None
    for stmt in function.statements:
        if stmt.lineno <= found.lineno:
            continue  # after the read too: a loop around both could store before the next read
        for node in ast.walk(stmt):
            touched = isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, (ast.Store, ast.Del)) or (
                isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == name
                and isinstance(node.ctx, (ast.Store, ast.Del))
                and key in _keys_of(analysis, node.slice, analysis.statement_of(node) or stmt)) or (
                isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id == name)
            if touched:
                return None
    return found


class _AnyKey:
    """Every key: what `_keys_of` answers for a key it cannot pin down."""

    def __contains__(self, key) -> bool:
        return True


def _keys_of(analysis: "Analysis", index: ast.AST, stmt: ast.stmt):
    """The keys a subscript `index` in `stmt` may stand for: a constant, or the variable of a
    `for` over a literal list of constants that holds `stmt` (`for split in ["train", "valid"]`);
    every key for anything else."""
    if isinstance(index, ast.Constant):
        return {index.value}
    node = analysis.parents.get(stmt)
    while isinstance(index, ast.Name) and node is not None:
        if isinstance(node, ast.For) and isinstance(node.target, ast.Name) and node.target.id == index.id:
            elements = node.iter.elts if isinstance(node.iter, (ast.List, ast.Tuple)) else None
            if elements is None or not all(isinstance(e, ast.Constant) for e in elements):
                break
            return {e.value for e in elements}
        node = analysis.parents.get(node)
    return _AnyKey()


def _assignments(function: "FunctionInfo", name: str) -> list[tuple[ast.Assign, tuple[ast.AST, int | None]]]:
    """Each `name = value` of the function (`_value_for` of each target that binds it)."""
    found = []
    for stmt in function.statements:
        if isinstance(stmt, ast.Assign):
            found.extend((stmt, bound) for target in stmt.targets
                         if (bound := _value_for(target, stmt.value, name)) is not None)
    return found


def _lambda_parameter_values(analysis: "Analysis", name: ast.Name) -> list[ast.AST] | None:
    """`apply_to_collection(datasets, Dataset, lambda x: DataLoader(x))`, `map(lambda x: ..., datasets)`:
    the parameter of a lambda passed to a call ranges over that call's other arguments."""
    node = analysis.parents.get(name)
    while node is not None and not isinstance(node, ast.Lambda):
        node = analysis.parents.get(node)
    if node is None or name.id not in {a.arg for a in node.args.args}:
        return None
    call = analysis.parents.get(node)
    if not isinstance(call, ast.Call):
        return []
    return [a for a in call.args if a is not node and not (isinstance(a, ast.Name) and a.id[:1].isupper())]


def _returned_element(analysis: "Analysis", value: ast.AST, index: int | None):
    """`train_set, model, opt = load_train_objs()`: the `index`-th element of what a function of
    the file returns, with the function's return statement to resolve names from."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)):
        return None
    functions = analysis.function_named(value.func.id)
    if len(functions) != 1:
        return None
    elements = []
    for node in walk_nodes(functions[0].node):
        if isinstance(node, ast.Return) and node.value is not None:
            returned = node.value
            if index is not None:
                if not (isinstance(returned, ast.Tuple) and index < len(returned.elts)):
                    return None
                returned = returned.elts[index]
            elements.append((returned, node))
    return elements or None


def _value_for(target: ast.AST, value: ast.AST, name: str) -> tuple[ast.AST, int | None] | None:
    """What `target = value` binds to `name`, with the tuple index when it unpacks a call
    (`a, b = random_split(ds, ...)` binds views of ds; `ds, model = build()` the first element;
    `a, b = [Dataset(s) for s in splits]` one evaluation of the comprehension's element)."""
    if isinstance(target, ast.Name):
        return (value, None) if target.id == name else None
    if isinstance(target, (ast.Tuple, ast.List)):
        for index, element in enumerate(target.elts):
            if isinstance(element, ast.Name) and element.id == name:
                if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
                    return value.elts[index], None
                if isinstance(value, ast.Call) and _unpacks_views(value):
                    return value, None
                if isinstance(value, (ast.ListComp, ast.GeneratorExp)):
                    # `train, val, test = [ListDataset(...) for idx in splits]`: each name is one
                    # evaluation of the comprehension's element, not the list of samples
                    return value.elt, None
                return value, index
    return None


def _unpacks_views(call: ast.Call) -> bool:
    """`random_split(...)` unpacked: every element views the same dataset."""
    return call_name(call) == "random_split"


def _dataset_class(analysis: "Analysis", call: ast.Call, nested: bool = False) -> ast.ClassDef | None:
    """The class `Dataset(...)` or `module.Dataset(...)` constructs: of this file, or of the
    workspace file its import names; with `nested`, also one defined inside the function
    that builds the dataset. `make(50000)` after `make = partial(Dataset, 10, 16)` constructs
    `Dataset` too."""
    func = _partial_target(analysis, call.func) or call.func
    if isinstance(func, ast.Name):
        for node in analysis.tree.body:
            if isinstance(node, ast.ClassDef) and node.name == func.id:
                return node
        scope = analysis.context(call).function
        if nested and not scope.is_module:
            for node in walk_nodes(scope.node):
                if isinstance(node, ast.ClassDef) and node.name == func.id:
                    return node
        qualname = analysis.imports.get(func.id)
    elif isinstance(func, ast.Attribute):
        qualname = analysis.qualname(func)  # `expert.ExpertDataset` of `from rl.algo import expert`
    else:
        return None
    if qualname is None or "." not in qualname:
        return None
    module, _, class_name = qualname.rpartition(".")
    return _workspace_class(module, class_name, analysis.path, hops=2)


def _partial_target(analysis: "Analysis", func: ast.expr) -> ast.expr | None:
    """`Dataset` when `func` is a name bound to `functools.partial(Dataset, ...)`."""
    if not isinstance(func, ast.Name):
        return None
    assignment = reaching_assignment(analysis, func)
    value = assignment.value if assignment is not None else None
    if (isinstance(value, ast.Call) and analysis.call_qualname(value) == "functools.partial" and value.args
            and isinstance(value.args[0], (ast.Name, ast.Attribute))):
        return value.args[0]
    return None


def _workspace_class(module: str, class_name: str, importer: str | None, hops: int) -> ast.ClassDef | None:
    other = workspace_analysis(module, importer)
    if other is None:
        return None
    for node in other.tree.body:
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            return node
    reexport = other.imports.get(class_name)
    if hops and reexport and "." in reexport:
        module, _, name = reexport.rpartition(".")
        return _workspace_class(module, name, other.path, hops - 1)
    return None


def _methods(cls: ast.ClassDef) -> dict[str, ast.FunctionDef]:
    return {n.name: n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


# Sampling methods of NumPy's `Generator` / `RandomState` (and Python's `random.Random`).
_GENERATOR_DRAWS = {"integers", "choice", "random", "permutation", "shuffle", "normal", "uniform", "randint",
                    "rand", "randn", "standard_normal", "binomial", "poisson", "beta", "sample"}
_GENERATOR_TYPES = {"numpy.random.default_rng", "numpy.random.RandomState", "numpy.random.Generator",
                    "random.Random"}


def _draws_from_stored_generator(analysis: "Analysis", cls: ast.ClassDef) -> bool:
    """`__getitem__` (or a method of the class it calls) samples from a generator `__init__`
    stored (`self.np_rng = np_rng` or `np.random.default_rng(seed)`): forked workers would each
    copy that generator and replay the same random stream, so workers change the data, not
    only the speed (torch's own RNG is reseeded per worker; a stored NumPy one is not)."""
    methods = _methods(cls)
    init, getitem = methods.get("__init__"), methods.get("__getitem__")
    if init is None or getitem is None:
        return False
    params = {a.arg for a in init.args.args[1:] + init.args.kwonlyargs}
    stored = set()
    for stmt in walk_nodes(init):
        if not isinstance(stmt, ast.Assign):
            continue
        pairs = [(target, stmt.value) for target in stmt.targets]
        for target, value in list(pairs):  # `self.feats, self.rng = feats, rng`
            if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
                pairs.extend(zip(target.elts, value.elts))
        for target, value in pairs:
            if is_self_attribute(target) and (
                    (isinstance(value, ast.Name) and value.id in params and "rng" in value.id.lower())
                    or (isinstance(value, ast.Call) and analysis.call_qualname(value) in _GENERATOR_TYPES)):
                stored.add(target.attr)
    if not stored:
        return False
    reached = [getitem] + [methods[n.func.attr] for n in walk_nodes(getitem)
                           if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                           and is_self_attribute(n.func) and n.func.attr in methods]
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _GENERATOR_DRAWS
               and is_self_attribute(n.func.value) and n.func.value.attr in stored
               for method in reached for n in walk_nodes(method))


def _indexes_memory(cls: ast.ClassDef) -> bool:
    """`__getitem__` only indexes attributes, reorders them, computes sizes or builds random tensors."""
    getitem = _methods(cls).get("__getitem__")
    if getitem is None or "__iter__" in _methods(cls):
        return False
    for node in walk_nodes(getitem):
        if isinstance(node, ast.Call) and call_name(node) not in _CHEAP_CALLS:
            return False
    return True


# torchvision transforms that only flip or rescale the values of a sample already in memory:
# one pass over its elements, about what a worker spends handing the sample back (a copy into
# shared memory), so workers have nothing to gain on them.
_CHEAP_TRANSFORMS = {"Normalize", "RandomHorizontalFlip", "RandomVerticalFlip"}
_COMPOSE = "Compose"


def _indexes_memory_with_cheap_transforms(analysis: "Analysis", cls: ast.ClassDef, construction: ast.Call) -> bool:
    """`__getitem__` indexes attributes and applies transforms stored from `__init__`'s
    parameters (`self.transform = transform`, then `x = self.transform(self.x[index])`), and
    what this construction passes for each is a flip, a `Normalize` or a `Compose` of those
    (`TransformedTensorDataset(x_tensor, y_tensor, transform=Compose([RandomHorizontalFlip(),
    Normalize(...)]))`) or nothing: no file is read, nothing is decoded or resized."""
    methods = _methods(cls)
    getitem, init = methods.get("__getitem__"), methods.get("__init__")
    if getitem is None or init is None or "__iter__" in methods:
        return False
    positional = [a.arg for a in init.args.args[1:]]
    parameters = set(positional) | {a.arg for a in init.args.kwonlyargs}
    stored = {}
    for stmt in walk_nodes(init):
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Name) and stmt.value.id in parameters:
            for target in stmt.targets:
                if is_self_attribute(target):
                    stored[target.attr] = stmt.value.id
    applied = set()
    for node in walk_nodes(getitem):
        if not isinstance(node, ast.Call) or call_name(node) in _CHEAP_CALLS:
            continue
        if not (isinstance(node.func, ast.Attribute) and is_self_attribute(node.func) and node.func.attr in stored):
            return False
        applied.add(stored[node.func.attr])
    if not applied:
        return False
    for parameter in applied:
        given = keyword(construction, parameter)
        value = given.value if given is not None else None
        if value is None and parameter in positional and positional.index(parameter) < len(construction.args):
            value = construction.args[positional.index(parameter)]
        if value is None:
            if not _defaults_to_none(init, parameter):
                return False
        elif not _cheap_transform(analysis, value, depth=0):
            return False
    return True


def _defaults_to_none(function: ast.FunctionDef, parameter: str) -> bool:
    args = function.args
    positional = args.args[len(args.args) - len(args.defaults):]
    pairs = list(zip(positional, args.defaults)) + [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d]
    return any(a.arg == parameter and isinstance(d, ast.Constant) and d.value is None for a, d in pairs)


def _cheap_transform(analysis: "Analysis", value: ast.AST | None, depth: int) -> bool:
    """`Normalize(...)`, `RandomHorizontalFlip()`, `None`, or a `Compose([...])` of them, also
    through the name it is bound to."""
    if depth > 4 or value is None:
        return False
    if isinstance(value, ast.Constant) and value.value is None:
        return True
    if isinstance(value, ast.Name):
        assignment = reaching_assignment(analysis, value)
        return assignment is not None and _cheap_transform(analysis, assignment.value, depth + 1)
    if not isinstance(value, ast.Call):
        return False
    qualname = analysis.call_qualname(value) or ""
    if not qualname.startswith("torchvision.transforms."):
        return False
    name = qualname.rpartition(".")[2]
    if name in _CHEAP_TRANSFORMS:
        return True
    if name != _COMPOSE or len(value.args) != 1 or value.keywords or not isinstance(value.args[0], (ast.List, ast.Tuple)):
        return False
    return all(_cheap_transform(analysis, item, depth + 1) for item in value.args[0].elts)


def _iterates_memory(cls: ast.ClassDef) -> bool:
    """`__iter__` only yields random or stored tensors (a synthetic iterable dataset)."""
    iterate = _methods(cls).get("__iter__")
    if iterate is None or "__getitem__" in _methods(cls):
        return False
    return all(call_name(n) in _CHEAP_CALLS for n in walk_nodes(iterate) if isinstance(n, ast.Call))


def _iterates_live_state(cls: ast.ClassDef) -> bool:
    """`__iter__` calls an object handed to `__init__` (a replay buffer, the policy's generator):
    the data is live state of the main process, which workers would only see as a stale copy."""
    methods = _methods(cls)
    init, iterate = methods.get("__init__"), methods.get("__iter__")
    if init is None or iterate is None:
        return False
    params = {a.arg for a in init.args.args[1:] + init.args.kwonlyargs}
    handed_in = set()
    for stmt in walk_nodes(init):
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Name) and stmt.value.id in params:
            handed_in.update(t.attr for t in stmt.targets if is_self_attribute(t))
    for node in walk_nodes(iterate):
        if isinstance(node, ast.Call):
            func = node.func.value if isinstance(node.func, ast.Attribute) and is_self_attribute(node.func.value) else node.func
            if is_self_attribute(func) and func.attr in handed_in:
                return True
    return False


def _seeks_shared_file(cls: ast.ClassDef) -> bool:
    """`__init__` opens a file into an attribute (`self.file = open(path, "rb")`) and
    `__getitem__` seeks in it: forked workers share that handle's offset, so with workers
    one worker's `seek` moves another's `read` and batches mix (`num_workers=0` is required)."""
    methods = _methods(cls)
    init, getitem = methods.get("__init__"), methods.get("__getitem__")
    if init is None or getitem is None:
        return False
    opened = {target.attr for stmt in walk_nodes(init) if isinstance(stmt, ast.Assign)
              and isinstance(stmt.value, ast.Call) and call_name(stmt.value) == "open"
              for target in stmt.targets if is_self_attribute(target)}
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "seek"
               and is_self_attribute(node.func.value)
               and node.func.value.attr in opened for node in walk_nodes(getitem))


# ------------------------------------------------------------------ how the loader is used
# Library helpers that take the first item of an iterable (MONAI's `first(loader)`).
_FIRST_ITEM_HELPERS = {"monai.utils.first", "monai.utils.misc.first"}


def _read_by_one_next(analysis: "Analysis", node: ast.AST) -> bool:
    """`next(iter(node))` or `node.__iter__().__next__()`: one item taken from a fresh iterator;
    so too MONAI's `first(node)`."""
    parent = analysis.parents.get(node)
    if isinstance(parent, ast.Call) and parent.args and parent.args[0] is node \
            and analysis.call_qualname(parent) in _FIRST_ITEM_HELPERS:
        return True
    iterator = _iterator_made_from(analysis, node)
    return iterator is not None and _advance_of(analysis, iterator) is not None


def _iterator_made_from(analysis: "Analysis", node: ast.AST) -> ast.Call | None:
    """The `iter(node)` or `node.__iter__()` call that makes an iterator of `node`, if any."""
    parent = analysis.parents.get(node)
    if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id == "iter":
        return parent
    return _method_called_on(analysis, parent, ("__iter__",))


def _advance_of(analysis: "Analysis", iterator: ast.AST) -> ast.Call | None:
    """The `next(iterator)`, `iterator.next()` or `iterator.__next__()` call taking one item, if any."""
    parent = analysis.parents.get(iterator)
    if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id == "next":
        return parent
    return _method_called_on(analysis, parent, ("next", "__next__"))


def _method_called_on(analysis: "Analysis", attribute: ast.AST | None, methods: tuple[str, ...]) -> ast.Call | None:
    """`x.method()` when `attribute` is the `x.method` of such a call."""
    if not (isinstance(attribute, ast.Attribute) and attribute.attr in methods):
        return None
    call = analysis.parents.get(attribute)
    return call if isinstance(call, ast.Call) and call.func is attribute else None


def _assigned_name(analysis: "Analysis", loader: ast.Call) -> str | None:
    parent = analysis.parents.get(loader)
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
        return parent.targets[0].id
    return None


def _loops_over_loader(analysis: "Analysis", loader: ast.Call) -> list[ast.For]:
    """The loops over this binding of the loader: those whose iterable reads a name that may
    see it (not a loop over what the name held before or after, in a notebook that builds
    `train_loader` twice), and those of the functions of the file it is passed to."""
    name = _assigned_name(analysis, loader)
    if name is None:
        # `for feats, _ in DataLoader(...)`, `enumerate(DataLoader(...))`: built in the loop's header
        return [loop.node for loop in analysis.loops
                if isinstance(loop.node, (ast.For, ast.AsyncFor))
                and any(node is loader for node in walk_nodes(loop.node.iter))]
    function = analysis.context(loader).function
    reads = {id(n) for n in _reads_of_binding(analysis, function, name, analysis.statement_of(loader))}
    loops = [loop for loop in _loops_over_name(analysis, function.node, name)
             if any(isinstance(n, ast.Name) and n.id == name and id(n) in reads for n in walk_nodes(loop.iter))]
    for site in function.calls:  # `train(model, train_loader)`: the loops of a function of this file
        for index, arg in enumerate(site.args):
            if isinstance(arg, ast.Name) and arg.id == name and id(arg) in reads and isinstance(site.func, ast.Name):
                for callee in analysis.function_named(site.func.id):
                    params = callee.params
                    if index < len(params):
                        loops.extend(_loops_over_name(analysis, callee.node, params[index]))
    return loops


def _loops_over_name(analysis: "Analysis", scope: ast.AST, name: str) -> list[ast.For]:
    """The `for` loops inside `scope` (nested functions included) whose iterable reads `name`:
    `loader`, `enumerate(loader)`, `tqdm(loader)`, `zip(loader_a, loader_b)`."""
    first, last = getattr(scope, "lineno", 0), getattr(scope, "end_lineno", None) or float("inf")
    return [loop for loop in _loops_by_iterable_name(analysis).get(name, ()) if first <= loop.lineno <= last]


_LOOPS_BY_ITERABLE_NAME: "FactKey[dict[str, list[ast.For]]]" = FactKey("datasets.loops_by_iterable_name")


def _loops_by_iterable_name(analysis: "Analysis") -> dict[str, list[ast.For]]:
    """The `for` loops of the file (in `analysis.loops` order) under each name their iterable
    reads: asked for every loader, this walks each loop's iterable once per version."""
    def collect() -> dict[str, list[ast.For]]:
        found: dict[str, list[ast.For]] = {}
        for loop in analysis.loops:
            if isinstance(loop.node, (ast.For, ast.AsyncFor)):
                for name in dict.fromkeys(n.id for n in walk_nodes(loop.node.iter) if isinstance(n, ast.Name)):
                    found.setdefault(name, []).append(loop.node)
        return found

    return analysis.facts.get_or_compute(_LOOPS_BY_ITERABLE_NAME, collect)


def _moves_to_gpu(analysis: "Analysis", call: ast.Call) -> bool:
    """`x.to(device)`, `x.cuda()`, or `x.type(Tensor)` with `Tensor = torch.cuda.FloatTensor if cuda else ...`."""
    if call.func.attr in ("to", "cuda"):
        return analysis.moves_batch_to_accelerator(call)
    if call.func.attr == "type" and len(call.args) == 1 and isinstance(call.args[0], ast.Name):
        # What the name is bound to anywhere in the file: a fact of the whole file.
        return analysis.file_fact(("bound to a CUDA tensor type", call.args[0].id),
                                  partial(_bound_to_cuda_type, name=call.args[0].id))
    return False


def _bound_to_cuda_type(analysis: "Analysis", name: str) -> bool:
    return any("torch.cuda." in ast.unparse(value) for value in analysis.assigned_values.get(name, ()))


def _loop_moves_model_input(analysis: "Analysis", loop: ast.For) -> bool:
    """A name bound by the loop header is moved (`.to(device)`, `.cuda()`) and a moved value
    reaches a call of a model (a name with the model role, or any call taking it)."""
    batch_names = {n.id for n in walk_nodes(loop.target) if isinstance(n, ast.Name)}
    moved = set()
    for node in walk_nodes(loop):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _moves_to_gpu(analysis, node):
            base = node.func.value
            while isinstance(base, (ast.Subscript, ast.Attribute)):
                base = base.value
            if isinstance(base, ast.Name) and base.id in batch_names:
                statement = analysis.statement_of(node)
                if isinstance(statement, ast.Assign):  # `x, y = batch[0].to(device), batch[1].to(device)`
                    moved.update(n.id for t in statement.targets for n in walk_nodes(t) if isinstance(n, ast.Name))
                moved.add(base.id)
    if not moved:
        return False
    roles = analysis.roles_for(loop)
    for node in walk_nodes(loop):
        if isinstance(node, ast.Call) and node.args:
            if any(isinstance(n, ast.Name) and n.id in moved for a in node.args for n in walk_nodes(a)):
                if roles.model_name(node) is not None or _MODEL_CALLEE.search(ast.unparse(node.func)):
                    return True
    return False

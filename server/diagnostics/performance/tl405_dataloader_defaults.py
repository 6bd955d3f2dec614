"""TL405 dataloader-defaults: flags a `DataLoader(...)` without `num_workers` (or with
`num_workers=0`), and one without `pin_memory=True` whose batches are moved to the GPU.
"""
from __future__ import annotations

import ast
from typing import Iterator

from torch_lsp.analysis import Analysis
from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import Finding, Rule
from torch_lsp.datasets import (
    batches_made_on_device, batches_reach_gpu, dataset_fits_one_batch, dataset_self_test, dataset_without_loading_work,
    read_once,
)
from torch_lsp.syntax_index import syntax_index
from torch_lsp.syntax_nodes import argument, has_star_args, keyword, node_key
from torch_lsp.workspace_files import workspace_analysis


@register
class DataLoaderDefaults(Rule):
    """
    ## What it does
    Flags a `DataLoader(...)` without `num_workers` (or with `num_workers=0`), and one
    without `pin_memory=True` whose batches are moved to the GPU (by a loop over this
    loader, by `fabric.setup_dataloaders`, or, when the loader is not iterated where it is
    built, anywhere in the file).

    Silent where workers have nothing to do or would change the program: the dataset's
    `__getitem__` or the loader's `collate_fn` already moves the batch to the GPU
    (`.to(device)`, `.cuda()`, also `partial(collate, device=device)`: CUDA tensors cannot be
    pinned, nor made in forked workers), the dataset holds
    its data in memory (`TensorDataset`, torchrec's synthetic `RandomRecDataset`, a class whose
    `__getitem__` only indexes attributes, reorders what it took (`torch.flip(row, dims=(0,))`)
    or builds random tensors, or applies a transform stored from its constructor that this loader's
    dataset gets as nothing, a flip, a `Normalize` or a `Compose` of those, a synthetic `IterableDataset`, a tensor such as the node indices
    `mask.nonzero().view(-1)`, `torch.randperm(n)` or `torch.Tensor(x)`, or a Python list of samples built before
    the loader sees it, `[(f, l) for f, l in pairs]` or `list(zip(x, y))`, each when no
    `collate_fn` loads each batch; also one read back by key from a dict that a loop over
    literal split names filled, `for split in ["train", "valid"]: datasets[split] =
    TensorDataset(...)`, then `DataLoader(datasets["train"])`; also what a factory of the file
    or of a project file returns when each of its returns is such a dataset,
    `datasets.get_dataset(name)` returning `moons_dataset(n)`, a `TensorDataset`, or names it
    unpacks from a comprehension of such datasets, `train, val = [ListDataset(...) for idx in
    splits]`), it iterates live state of the
    main process (a replay buffer, a generator handed in by the model: workers would see a
    stale copy) or seeks in one file its `__init__` opened (`self.file = open(path, "rb")`,
    then `self.file.seek(...)` per item: forked workers would share the offset), the loader
    is only read through `next(iter(loader))` (or its dunder spelling
    `loader.__iter__().__next__()`, an `iter(loader)` advanced by `next()` outside any
    loop, or a `for` over it, outside any loop, that breaks after its first batch or a known
    few (`if i == args.n_samples - 1: break`, default 8): a notebook showing a batch, a
    script caching a few samples before it trains;
    besides reads that only look at it, `len(loader)` or a cell displaying it, and not
    counting reads before the loader is built or after a later cell builds it anew, nor a
    function's parameter of the same name) or not read at all where no importing module could
    read it (in a notebook, a function's local, a name bound under `if __name__ == "__main__":`
    as a dataset file's self-test), the loader is such a self-test's, over a dataset (or with a sampler) of a class
    the file defines, whose loops train nothing and move no batch to a GPU (samples plotted or
    stepped through in a debugger), its `collate_fn` is a closure or lambda, or what a factory returns as one (`collate_fn=create_collate_fn()`,
    the factory of the file or of the workspace file its import names: spawned workers cannot
    pickle it), the batch is the whole dataset (`batch_size=len(dataset)`: one batch per pass,
    nothing for workers to prepare ahead; so too a dataset of a class whose `__len__` returns the
    size its construction passes as a literal within the batch size, `DataLoader(MeshSamples(path,
    size=1), batch_size=1)`, a dummy validation set), or the file is a test or a helper of a test suite. The dataset class is
    looked up in the file and in the workspace file its import names; a dataset a function
    reads from its enclosing scope (a notebook's earlier cell) is followed there.

    ## Why is this bad
    With no workers, loading and augmenting each batch happens in the training process and
    the GPU waits for it; without pinned memory, host-to-device copies cannot overlap with
    compute (`non_blocking=True` has no effect).

    ## Example
    ```python
    loader = DataLoader(dataset, batch_size=64, shuffle=True)
    ```

    ## Use instead
    ```python
    loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=4, pin_memory=True)
    ```
    """

    code = "TL405"
    name = "dataloader-defaults"
    severity = "information"
    fix_safety = "unsafe"

    _LOADERS = {"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"}

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        if analysis.is_test_file or analysis.imports_test_suite:
            return  # tests load tiny fixtures in-process on purpose
        for call in analysis.calls_to(*self._LOADERS):
            if has_star_args(call) or self._toy_dataset(call) or _whole_dataset_batch(call):
                continue
            if dataset_without_loading_work(analysis, call) or read_once(analysis, call) \
                    or dataset_fits_one_batch(analysis, call) \
                    or dataset_self_test(analysis, call):
                continue
            if batches_made_on_device(analysis, call):
                continue  # CUDA tensors cannot be pinned, nor made in forked workers
            if self._local_callable(analysis, call):
                continue  # a closure `collate_fn` cannot be pickled for spawned workers: not a drop-in change
            problems, fixes = [], []
            workers = argument(call, 5, "num_workers")
            if workers is None or (isinstance(workers, ast.Constant) and workers.value == 0):
                problems.append("loads batches in the main process (no `num_workers`)"
                                if workers is None else "loads batches in the main process (`num_workers=0`)")
                fixes.append("num_workers=4")
            gpu_batches = batches_reach_gpu(analysis, call)
            if gpu_batches is None:
                gpu_batches = analysis.moves_to_accelerator(batches_only=True)
            gpu_batches = gpu_batches or analysis.framework_places_on_accelerator  # `fabric.setup_dataloaders`
            if argument(call, 7, "pin_memory") is None and gpu_batches:
                problems.append("does not pin memory although batches are moved to the GPU")
                fixes.append("pin_memory=True")
            if problems:
                cost = "the GPU waits on data" if gpu_batches else "each step waits for its batch to load"
                message = f"This `DataLoader` {' and '.join(problems)}; {cost}. Add `{', '.join(fixes)}`."
                yield self.finding(call, message, f"Add `{', '.join(fixes)}`", data={"add": fixes})

    def _local_callable(self, analysis: Analysis, call: ast.Call) -> bool:
        """`collate_fn=` / `worker_init_fn=` a lambda or a function defined inside a function."""
        for name in ("collate_fn", "worker_init_fn"):
            value = keyword(call, name)
            if value is None:
                continue
            if isinstance(value.value, ast.Lambda) or _returns_closure(analysis, value.value):
                return True  # `collate_fn=make_collate(pad)` hands out a nested function inline
            if isinstance(value.value, ast.Name):
                function = analysis.context(call).function
                if not function.is_module and any(  # a def nested in the function (a module-level one is no closure)
                        local.node is function.node or syntax_index(analysis).encloses(function.node, local.node)
                        for local in analysis.function_named(value.value.id)):
                    return True
                bound = analysis.roles_for(function).assignments.get(value.value.id, ())
                if any(_returns_closure(analysis, a.value) for a in bound if not a.unpacked):
                    return True  # `collate_fn = get_collate_fn(pad_index)` hands out a nested function
        return False

    def _toy_dataset(self, call: ast.Call) -> bool:
        """`DataLoader(range(10))`, `DataLoader([...])`: nothing to load in parallel."""
        dataset = argument(call, 0, "dataset")
        if isinstance(dataset, (ast.List, ast.Tuple)):
            return True
        return isinstance(dataset, ast.Call) and isinstance(dataset.func, ast.Name) and dataset.func.id in ("range", "list")


def _whole_dataset_batch(call: ast.Call) -> bool:
    """`DataLoader(dev_set, batch_size=len(dev_set))`: one batch per pass, so workers have no
    later batch to prepare while the GPU works, and one pinned copy per pass saves nothing."""
    dataset, size = argument(call, 0, "dataset"), argument(call, 1, "batch_size")
    return (dataset is not None and isinstance(size, ast.Call) and isinstance(size.func, ast.Name)
            and size.func.id == "len" and len(size.args) == 1 and not size.keywords
            and node_key(size.args[0]) == node_key(dataset))


def _returns_closure(analysis: Analysis, value: ast.AST | None) -> bool:
    """`make_collate(pad)` where `make_collate`, of the file or of the workspace file its import
    names, returns a function it defines inside itself, or a lambda: a local object that
    spawned workers cannot unpickle."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)):
        return False
    for factory in _factories(analysis, value.func.id):
        nested = {n.name for n in ast.walk(factory.node)
                  if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n is not factory.node}
        for node in ast.walk(factory.node):
            if isinstance(node, ast.Return) and (isinstance(node.value, ast.Lambda) or (
                    isinstance(node.value, ast.Name) and node.value.id in nested)):
                return True
    return False


def _factories(analysis: Analysis, name: str) -> list:
    """The functions `name` calls: the file's own, else those of the workspace module that
    `from utils import create_collate_fn` names."""
    local = analysis.function_named(name)
    if local:
        return local
    qualname = analysis.imports.get(name)
    if qualname is None or "." not in qualname:
        return []
    module, _, function = qualname.rpartition(".")
    other = workspace_analysis(module, analysis.path)
    return other.function_named(function) if other is not None else []

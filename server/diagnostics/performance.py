"""TL4xx — performance: syncs, repeated moves, quadratic copies, unbatched work."""
from __future__ import annotations

import ast
from typing import Iterator

from server.analysis import Analysis
from server.diagnostics import register
from server.diagnostics.base import Finding, Rule
from server.syntax_nodes import argument, call_name, has_star_args, keyword, method_span, moved_value, receiver

_SYNC_METHODS = ("item", "cpu", "numpy", "tolist")


def _guarded_by_modulo(analysis: Analysis, node: ast.AST) -> bool:
    """An enclosing `if step % 100 == 0:` (alone or joined with `and`) makes it periodic."""
    for if_stmt, in_body in analysis.context(node).guards:
        if in_body and _tests_modulo(if_stmt.test):
            return True
    return False


def _tests_modulo(test: ast.AST) -> bool:
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_tests_modulo(v) for v in test.values)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    if isinstance(test, ast.Compare):
        test = test.left
    return isinstance(test, ast.BinOp) and isinstance(test.op, ast.Mod)


@register
class SyncInTrainingLoop(Rule):
    """
    ## What it does
    Flags `.item()`, `.cpu()`, `.numpy()` and `.tolist()` on a tensor in every iteration of
    a training loop (not under a periodic `if step % N == 0:`), in code that runs on a GPU.

    ## Why is this bad
    Each of these copies a value to the host, which waits for every queued GPU kernel to
    finish: the CPU can no longer run ahead, and the GPU idles between steps.

    ## Example
    ```python
    for x, y in loader:
        ...
        running += loss.item()
    ```

    ## Use instead
    ```python
    for step, (x, y) in enumerate(loader):
        ...
        running += loss.detach()
        if step % 100 == 0:
            print(f"loss {loss.item():.4f}")
    ```
    """

    code = "TL401"
    name = "sync-in-training-loop"
    severity = "information"
    fix_safety = "none"

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        if not analysis.moves_to_accelerator():
            return
        for call in analysis.iter_calls(*_SYNC_METHODS):
            target = receiver(call)
            if target is None or call.args or call.keywords:
                continue
            if isinstance(target, ast.Call) and call_name(target) in _SYNC_METHODS:
                continue  # `x.cpu().tolist()`: reported on the first sync of the chain
            loop = analysis.enclosing_step_loop(call)
            if loop is None or _guarded_by_modulo(analysis, call):
                continue
            if call_name(call) != "item" and not self._is_device_tensor(analysis, target, call):
                continue
            text = ast.unparse(call)
            message = (
                f"`{text}` runs every training step and makes the host wait for the GPU, stalling the pipeline. "
                f"Keep values on the device (e.g. `running += loss.detach()`) and sync only when logging "
                f"(under `if step % N == 0:`)."
            )
            yield self.finding_at(method_span(call), message)

    def _is_device_tensor(self, analysis: Analysis, target: ast.AST, at: ast.AST) -> bool:
        roles = analysis.roles_for(at)
        base = target
        while isinstance(base, ast.Call) and isinstance(base.func, ast.Attribute):
            base = base.func.value
        while isinstance(base, ast.Subscript):
            base = base.value
        return roles.carries_graph(base, at) or roles.carries_graph(target, at)


@register
class ModuleMoveInLoop(Rule):
    """
    ## What it does
    Flags a module (a model or a loss module) moved with `.to(...)`, `.cuda()` or `.cpu()`
    inside a loop. Moving data batches in a loop is fine.

    ## Why is this bad
    After the first iteration the move does nothing useful but still walks every parameter
    and buffer, each iteration; it also hides where the model really lives.

    ## Example
    ```python
    for epoch in range(epochs):
        model.to(device)
        for x, y in loader:
            ...
    ```

    ## Use instead
    ```python
    model.to(device)
    for epoch in range(epochs):
        for x, y in loader:
            ...
    ```
    """

    code = "TL402"
    name = "module-move-in-loop"
    severity = "warning"
    fix_safety = "safe"

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        for call in analysis.iter_calls("to", "cuda", "cpu"):
            target = receiver(call)
            ctx = analysis.context(call)
            if not isinstance(target, ast.Name) or not ctx.loops or has_star_args(call):
                continue
            roles = analysis.roles_for(call)
            if not (roles.is_model(target.id) or roles.is_criterion(target.id)):
                continue
            if call_name(call) == "to" and not self._moves_device(analysis, call):
                continue
            stmt = analysis.statement_of(call)
            if moved_value(stmt, target.id) is None:
                continue
            if any(analysis.loop_rebinds(loop, target.id, besides=stmt) for loop in ctx.loops):
                continue
            text = ast.unparse(call)
            message = (
                f"`{text}` moves `{target.id}` on every iteration of this loop; after the first it is wasted work. "
                f"Move it before the loop."
            )
            yield self.finding(call, message, f"Move `{ast.unparse(stmt).strip()}` before the loop")

    def _moves_device(self, analysis: Analysis, call: ast.Call) -> bool:
        if not call.args and keyword(call, "device") is None:
            return False
        first = call.args[0] if call.args else None
        if first is not None:
            qualname = analysis.qualname(first) or ""
            if qualname.startswith("torch.") and qualname.split(".")[-1] in _DTYPES:
                return False
        return True


_DTYPES = {
    "float", "float16", "float32", "float64", "half", "double", "bfloat16", "int", "int8", "int16", "int32",
    "int64", "long", "bool", "uint8", "complex64", "complex128",
}


@register
class CatInLoop(Rule):
    """
    ## What it does
    Flags an accumulator grown with `torch.cat` / `torch.stack` inside a loop:
    `acc = torch.cat([acc, x])`.

    ## Why is this bad
    Every iteration copies everything gathered so far, so the loop costs quadratic time and
    churns memory; on the GPU it also fragments the allocator.

    ## Example
    ```python
    embeddings = torch.empty(0, dim)
    for batch in loader:
        embeddings = torch.cat([embeddings, encoder(batch)])
    ```

    ## Use instead
    ```python
    chunks = []
    for batch in loader:
        chunks.append(encoder(batch))
    embeddings = torch.cat(chunks)
    ```
    """

    code = "TL403"
    name = "cat-in-loop"
    severity = "warning"
    fix_safety = "unsafe"

    _JOINS = {"torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.vstack", "torch.hstack"}

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        for call in analysis.calls_to(*self._JOINS):
            if not analysis.context(call).loops:
                continue
            stmt = analysis.statement_of(call)
            if not (isinstance(stmt, ast.Assign) and stmt.value is call and len(stmt.targets) == 1):
                continue
            target = stmt.targets[0]
            if not isinstance(target, ast.Name) or not call.args or not isinstance(call.args[0], (ast.List, ast.Tuple)):
                continue
            if not any(isinstance(e, ast.Name) and e.id == target.id for e in call.args[0].elts):
                continue
            if not self._pure_accumulator(analysis, stmt, target.id):
                continue
            join = ast.unparse(call.func)
            message = (
                f"`{target.id} = {join}([...{target.id}...])` copies everything gathered so far on every "
                f"iteration (quadratic time). Append the pieces to a list and call `{join}` once after the loop."
            )
            yield self.finding(call, message, f"Collect into a list and call `{join}` once after the loop",
                               data={"accumulator": target.id})


    def _pure_accumulator(self, analysis: Analysis, stmt: ast.stmt, name: str) -> bool:
        """Only grown here and not read elsewhere in the loop: `x = torch.cat((x, skip))` in a
        U-Net or `out = torch.cat((out, token))` in generation are not collect-then-use."""
        loop = analysis.context(stmt).loop
        if analysis.loop_rebinds(loop, name, besides=stmt):
            return False
        own = {id(n) for n in ast.walk(stmt)}
        for node in ast.walk(loop.node):
            if isinstance(node, ast.Name) and node.id == name and id(node) not in own:
                return False
        return True


@register
class PerSampleForward(Rule):
    """
    ## What it does
    Flags a loop over the indices of a batch (`range(x.size(0))`, `range(len(batch))`) that
    calls a model on one sample `x[i]` at a time.

    ## Why is this bad
    A model call per sample wastes the parallelism the hardware is built for: each call
    launches every kernel for a batch of one, typically tens of times slower.

    ## Example
    ```python
    for i in range(images.size(0)):
        outputs.append(model(images[i].unsqueeze(0)))
    ```

    ## Use instead
    ```python
    outputs = model(images)
    ```
    """

    code = "TL404"
    name = "per-sample-forward"
    severity = "information"
    fix_safety = "none"

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        for loop in analysis.loops:
            node = loop.node
            if not isinstance(node, ast.For) or not isinstance(node.target, ast.Name):
                continue
            batch = _batch_of_range(node.iter)
            if batch is None:
                continue
            index = node.target.id
            roles = analysis.roles_for(loop.function)
            for call in loop.direct_calls:
                model = roles.model_name(call)
                if model and any(_indexes(arg, batch, index) for arg in call.args):
                    message = (
                        f"`{model}` is called on one sample of `{batch}` per iteration; batched work is far faster. "
                        f"Call `{model}({batch})` once (or on slices of several samples)."
                    )
                    yield self.finding(call, message)


def _batch_of_range(node: ast.AST) -> str | None:
    """`x` for `range(x.size(0))`, `range(x.shape[0])`, `range(len(x))`."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range"):
        return None
    if len(node.args) != 1:
        return None
    size = node.args[0]
    if isinstance(size, ast.Call) and isinstance(size.func, ast.Name) and size.func.id == "len" and size.args:
        return size.args[0].id if isinstance(size.args[0], ast.Name) else None
    if isinstance(size, ast.Call) and isinstance(size.func, ast.Attribute) and size.func.attr == "size":
        if size.args and isinstance(size.args[0], ast.Constant) and size.args[0].value == 0:
            return size.func.value.id if isinstance(size.func.value, ast.Name) else None
    if isinstance(size, ast.Subscript) and isinstance(size.value, ast.Attribute) and size.value.attr == "shape":
        if isinstance(size.slice, ast.Constant) and size.slice.value == 0 and isinstance(size.value.value, ast.Name):
            return size.value.value.id
    return None


def _indexes(expr: ast.AST, batch: str, index: str) -> bool:
    for node in ast.walk(expr):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == batch:
            if isinstance(node.slice, ast.Name) and node.slice.id == index:
                return True
    return False


@register
class DataLoaderDefaults(Rule):
    """
    ## What it does
    Flags a `DataLoader(...)` without `num_workers` (or with `num_workers=0`), and one
    without `pin_memory=True` in a file that moves its batches to the GPU.

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
        for call in analysis.calls_to(*self._LOADERS):
            if has_star_args(call):
                continue
            problems, fixes = [], []
            if analysis.is_test_file or self._toy_dataset(call):
                continue
            workers = argument(call, 5, "num_workers")
            if workers is None or (isinstance(workers, ast.Constant) and workers.value == 0):
                problems.append("loads batches in the main process (no `num_workers`)"
                                if workers is None else "uses `num_workers=0`, so batches load in the main process")
                fixes.append("num_workers=4")
            if argument(call, 7, "pin_memory") is None and analysis.moves_to_accelerator(batches_only=True):
                problems.append("does not pin memory although batches are moved to the GPU")
                fixes.append("pin_memory=True")
            if problems:
                message = (
                    f"This `DataLoader` {' and '.join(problems)}; the GPU waits on data. "
                    f"Add `{', '.join(fixes)}`."
                )
                yield self.finding(call, message, f"Add `{', '.join(fixes)}`", data={"add": fixes})


    def _toy_dataset(self, call: ast.Call) -> bool:
        """`DataLoader(range(10))`, `DataLoader([...])`: nothing to load in parallel."""
        dataset = argument(call, 0, "dataset")
        if isinstance(dataset, (ast.List, ast.Tuple)):
            return True
        return isinstance(dataset, ast.Call) and isinstance(dataset.func, ast.Name) and dataset.func.id in ("range", "list")


@register
class DataParallelUse(Rule):
    """
    ## What it does
    Flags `nn.DataParallel(...)`.

    ## Why is this bad
    `DataParallel` runs one process with a thread per GPU, replicates the model every
    forward pass and gathers outputs on one device; it is slower than
    `DistributedDataParallel` even on a single machine, and PyTorch recommends against it.

    ## Example
    ```python
    model = nn.DataParallel(model)
    ```

    ## Use instead
    ```python
    model = DistributedDataParallel(model.to(local_rank), device_ids=[local_rank])  # launched with torchrun
    ```
    """

    code = "TL406"
    name = "data-parallel"
    severity = "warning"
    fix_safety = "none"

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        for call in analysis.calls_to("torch.nn.DataParallel", "torch.nn.parallel.DataParallel",
                                      "torch.nn.parallel.data_parallel.DataParallel"):
            message = (
                f"`{ast.unparse(call.func)}` replicates the model in one process on every forward pass and is "
                f"slower than `DistributedDataParallel`, even on one machine. Use `DistributedDataParallel` "
                f"(launched with `torchrun`)."
            )
            yield self.finding(call, message)


@register
class ManualZeroGrad(Rule):
    """
    ## What it does
    Flags gradients cleared by writing zeros — `p.grad.zero_()`, `p.grad.data.zero_()`,
    `p.grad.fill_(0)`, `optimizer.zero_grad(set_to_none=False)`.

    ## Why is this bad
    Writing zeros launches a kernel per parameter and keeps the gradient memory allocated;
    setting gradients to `None` (the default of `zero_grad()` since PyTorch 2.0) frees it
    and lets the next backward write instead of accumulate.

    ## Example
    ```python
    for p in model.parameters():
        p.grad.zero_()
    ```

    ## Use instead
    ```python
    optimizer.zero_grad(set_to_none=True)
    ```
    """

    code = "TL407"
    name = "manual-zero-grad"
    severity = "information"
    fix_safety = "safe"

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        for call in analysis.iter_calls("zero_", "fill_", "zero_grad"):
            name = call_name(call)
            if name == "zero_grad":
                kw = keyword(call, "set_to_none")
                if kw is not None and isinstance(kw.value, ast.Constant) and kw.value.value is False:
                    yield self.finding(call, f"`{ast.unparse(call)}` writes zeros into every gradient instead of "
                                             f"freeing it. Use `set_to_none=True` (the default).",
                                       "Use `set_to_none=True`")
                continue
            target = receiver(call)
            if isinstance(target, ast.Attribute) and target.attr == "data":
                target = target.value
            if not (isinstance(target, ast.Attribute) and target.attr == "grad"):
                continue
            if name == "fill_" and not (call.args and isinstance(call.args[0], ast.Constant) and call.args[0].value == 0):
                continue
            message = (
                f"`{ast.unparse(call)}` writes zeros into the gradient instead of freeing it. "
                f"Call `optimizer.zero_grad(set_to_none=True)` (or set `{ast.unparse(target)} = None`)."
            )
            yield self.finding(call, message, f"Set `{ast.unparse(target)} = None` instead")


_ANOMALY_SWITCHES = ("torch.autograd.set_detect_anomaly", "torch.autograd.anomaly_mode.set_detect_anomaly")
_ANOMALY_CONTEXTS = ("torch.autograd.detect_anomaly", "torch.autograd.anomaly_mode.detect_anomaly")


@register
class AnomalyDetectionOn(Rule):
    """
    ## What it does
    Flags `torch.autograd.set_detect_anomaly(True)` and `torch.autograd.detect_anomaly()`
    left on, unguarded, in code that trains.

    ## Why is this bad
    Anomaly detection records a stack trace for every operation and checks every backward
    result for NaNs; training runs several times slower. It is a debugging tool.

    ## Example
    ```python
    torch.autograd.set_detect_anomaly(True)
    ```

    ## Use instead
    ```python
    if args.debug:
        torch.autograd.set_detect_anomaly(True)
    ```
    """

    code = "TL408"
    name = "anomaly-detection-on"
    severity = "warning"
    fix_safety = "safe"

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        if not analysis.training_loops and not analysis.iter_calls("backward"):
            return
        for call in analysis.calls_to(*_ANOMALY_SWITCHES, *_ANOMALY_CONTEXTS):
            qualname = analysis.call_qualname(call)
            if analysis.context(call).guards:
                continue
            if qualname in _ANOMALY_SWITCHES:
                mode = argument(call, 0, "mode")
                if not (isinstance(mode, ast.Constant) and mode.value is True):
                    continue
            elif qualname not in _ANOMALY_CONTEXTS:
                continue
            message = (
                f"`{ast.unparse(call)}` turns on anomaly detection, which slows every training step several times. "
                f"Remove it, or enable it only behind a debug flag."
            )
            yield self.finding(call, message, "Remove the anomaly detection")


@register
class MissingCompile(Rule):
    """
    ## What it does
    Flags a file that trains a model without ever calling `torch.compile`. Off by default:
    enable it with `extend-select = ["TL409"]`.

    ## Why is this bad
    On recent GPUs `torch.compile` often speeds training up substantially by fusing
    kernels; it is a one-line change worth trying.

    ## Example
    ```python
    model = Net().to(device)
    for x, y in loader:
        ...
    ```

    ## Use instead
    ```python
    model = torch.compile(Net().to(device))
    for x, y in loader:
        ...
    ```
    """

    code = "TL409"
    name = "missing-compile"
    severity = "information"
    fix_safety = "none"
    enabled_by_default = False

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        if any(analysis.call_qualname(c) == "torch.compile" or call_name(c) == "compile" for c in analysis.calls):
            return
        for loop in analysis.training_loops:
            if not analysis.is_step_loop(loop):
                continue
            roles = analysis.roles_for(loop.function)
            for call in loop.calls:
                model = roles.model_name(call)
                if model:
                    yield self.finding(call, f"`{model}` is trained without `torch.compile`. Try "
                                             f"`{model} = torch.compile({model})` for faster steps.")
                    return

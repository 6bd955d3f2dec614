"""TL406 data-parallel: flags `nn.DataParallel(...)` and `nn.parallel.data_parallel(...)` in
training code, unless the code already chose it deliberately."""
from __future__ import annotations

import ast
import re
from typing import Iterator

from torch_lsp.analysis import Analysis, under_cpu_guard
from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import Finding, Rule
from torch_lsp.syntax_nodes import argument, walk_nodes


_DATA_PARALLEL = ("torch.nn.DataParallel", "torch.nn.parallel.DataParallel",
                  "torch.nn.parallel.data_parallel.DataParallel")
_FUNCTIONAL = ("torch.nn.parallel.data_parallel", "torch.nn.parallel.data_parallel.data_parallel")
_DDP = ("torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel")
# Text of a log line that already tells the user DP is a fallback (`"DP not recommended, use DDP"`).
_WARNS_ABOUT_DP = re.compile(r"\bDP\b|DataParallel|\bDDP\b")
# A guard that opts in to several GPUs: `if torch.cuda.device_count() > 1:`, `if ngpu > 1:`.
_GPU_COUNT = re.compile(r"device_count|n_?gpus?|num_gpus?|gpu_count|len\(.*gpus?.*\)", re.IGNORECASE)


@register
class DataParallelUse(Rule):
    """
    ## What it does
    Flags `nn.DataParallel(...)` and the functional `nn.parallel.data_parallel(...)`; under
    a guard that opts in to several GPUs (`if torch.cuda.device_count() > 1:`) the message
    says it is that multi-GPU path. Silent where the choice is deliberate: a method that
    wraps the module it is given and returns it (a library's DP strategy; a trainer that
    keeps the wrapped model for its own training is reported), a block whose earlier statements
    already tell the user about DP/DDP, a branch beside one that builds
    `DistributedDataParallel` (DP is the fallback), and inference code (a file that
    evaluates and never backpropagates, or a functional `data_parallel(...)` forward under
    `torch.no_grad()`, where DDP is no natural replacement; a file that also builds
    `DistributedDataParallel` prepares training and is not that), and the CPU-only path (the
    `else` of `if torch.cuda.is_available():`), where `DataParallel` only calls the module.

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
        if analysis.file_fact("TL406 the file only evaluates", _inference_only):
            return
        for call in analysis.calls_to(*_DATA_PARALLEL, *_FUNCTIONAL):
            if self._wraps_parameter(analysis, call) or self._already_warned(analysis, call):
                continue
            if self._fallback_of_ddp(analysis, call) or self._forward_without_grad(analysis, call):
                continue
            if under_cpu_guard(analysis, call):
                continue  # without CUDA `DataParallel` only calls the module: nothing is replicated
            opt_in = self._opt_in(analysis, call)
            message = (
                f"{'This multi-GPU path uses ' if opt_in else ''}`{ast.unparse(call.func)}`"
                f"{', which' if opt_in else ''} replicates the model in one process on every forward pass and is "
                f"slower than `DistributedDataParallel`, even on one machine. Use `DistributedDataParallel` "
                f"(launched with `torchrun`)."
            )
            yield self.finding(call, message)

    def _forward_without_grad(self, analysis: Analysis, call: ast.Call) -> bool:
        """`with torch.no_grad(): out = data_parallel(G, (z,))`: the functional form runs one
        forward pass there and then, with autograd off (a sample sheet drawn during training),
        which is inference: DDP, a wrapper that syncs gradients, does not replace it."""
        return analysis.call_qualname(call) in _FUNCTIONAL and analysis.context(call).grad_disabled

    def _wraps_parameter(self, analysis: Analysis, call: ast.Call) -> bool:
        """`def setup_module(self, module): return DataParallel(module)`: a wrapper or strategy
        that hands the wrapped module back to its caller. A trainer that keeps it for its own
        training (`self.model = DataParallel(model)` in `__init__`) made the choice itself."""
        function = analysis.context(call).function
        module = argument(call, 0, "module")
        if not (function.is_method and isinstance(module, ast.Name) and module.id in function.params):
            return False
        statement = analysis.statement_of(call)
        if isinstance(statement, ast.Return):
            return True
        names = {t.id for t in getattr(statement, "targets", ()) if isinstance(t, ast.Name)}
        return any(isinstance(node, ast.Return) and isinstance(node.value, ast.Name) and node.value.id in names
                   for node in ast.walk(function.node))

    def _already_warned(self, analysis: Analysis, call: ast.Call) -> bool:
        statement = analysis.statement_of(call)
        block = analysis.block_of(statement) if statement is not None else None
        if not block:
            return False
        for earlier in block[:block.index(statement)]:
            if isinstance(earlier, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or (
                    isinstance(earlier, ast.Expr) and isinstance(earlier.value, ast.Constant)):
                continue  # a definition or a docstring tells the reader of the code, not the user
            for node in walk_nodes(earlier):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and _WARNS_ABOUT_DP.search(node.value):
                    return True
        return False

    def _fallback_of_ddp(self, analysis: Analysis, call: ast.Call) -> bool:
        """`if args.distributed: DDP(...)` / `else: DataParallel(...)`: another branch of an
        enclosing `if` builds `DistributedDataParallel`, so DP is the script's chosen fallback."""
        ddp = {id(c) for c in analysis.calls_to(*_DDP)}
        if not ddp:
            return False
        return any(id(node) in ddp for if_stmt, _ in analysis.context(call).guards for node in walk_nodes(if_stmt))

    def _opt_in(self, analysis: Analysis, call: ast.Call) -> bool:
        return any(in_body and _GPU_COUNT.search(ast.unparse(if_stmt.test))
                   for if_stmt, in_body in analysis.context(call).guards)


def _inference_only(analysis: Analysis) -> bool:
    """Nothing backpropagates, and the file evaluates (`model.eval()`, `no_grad`, `inference_mode`).
    A file that builds `DistributedDataParallel` (a wrapper whose whole point is syncing gradients)
    prepares training, even when its loop lives in another file (`build_gan(...)` helpers)."""
    if analysis.backward_call_list() or analysis.training_loops:  # the cheaper question first
        return False
    if analysis.calls_to(*_DDP):
        return False
    return bool(analysis.iter_calls("eval") or analysis.calls_to(
        "torch.no_grad", "torch.inference_mode", "torch.autograd.grad_mode.no_grad"))

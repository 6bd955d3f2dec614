"""TL105 hardcoded-device: flags `.cuda()`, `.to("cuda")` and `device="cuda"` where a device
variable (`device = torch.device(...)`) is defined in the same function or at module level,
unless a CUDA test guards the call.
"""
from __future__ import annotations

import ast
import re
from typing import Iterator

from torch_lsp.analysis import Analysis, FunctionInfo, under_cuda_guard
from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import FixInfo, Finding, Related, Rule
from torch_lsp.fact_cache import FactKey
from torch_lsp.roles import DEVICE_NAME, classification_facts, constructed_kind
from torch_lsp.syntax_nodes import call_name, keyword, method_span


@register
class HardcodedDevice(Rule):
    """
    ## What it does
    Flags `.cuda()`, `.cuda(args.gpu)`, `.to("cuda")` and `device="cuda"` where a device
    variable (`device = torch.device(...)`, or the device accelerate or Fabric picked,
    `device = accelerator.device`) is defined in the same function (or is one of
    its parameters) or at module level. A device variable local to another function does
    not count, and a call under a
    CUDA test (`if device.type == "cuda":`, `if torch.cuda.is_available():`, `if args.cuda:`,
    `if cuda:` with `cuda = torch.cuda.is_available()`) is the device variable in disguise:
    not flagged. Nor is `f(..., device="cuda")` when another call of the same function of
    the file passes `device="cpu"`: the routine is run on each device in turn. Nor
    `device="cuda"` given to a library outside PyTorch that names devices its own way
    (`ctranslate2.Generator(path, device="cuda")`, ONNX Runtime, FAISS, torchsummary's
    `summary`), nor a GPU named by number in a file that names several (`block_1.cuda(0)`,
    `block_3.cuda(2)`: modules placed on GPUs by hand for model or pipeline parallelism,
    which one device variable cannot express), nor a bare `.cuda()`, `.to("cuda")` or
    `device="cuda"` in a CUDA-only program whose module device is the process's GPU made current
    (`device = torch.device("cuda", local_rank)`, then `torch.cuda.set_device(device)`): the bare
    "cuda" is that device (a numbered one, `"cuda:0"`, is still another rank's), nor a call in
    a function that never reads the module's device variable when that variable names one GPU
    by a constant number with no CPU fallback (`rw_device = torch.device("cuda:1")` for a reward
    model, while `inference(model)` puts the policy on `"cuda"`): the script places its models on
    GPUs by hand and needs those GPUs anyway. The fix of
    `.cuda(<index variable>)` is unsafe (the index may differ from
    the device variable's), and so is any fix in a function the module calls before it
    assigns its device variable, or in module code above that assignment (a notebook cell
    before the one defining `device`, whose message says to define it first): `.to(device)`
    there would raise `NameError`. A variable
    named for where results or loaded data are kept (`gather_device`, `storage_device`, `offload_device`,
    `dataloader_device`,
    `cpu_device`) is not the device the computation runs on, so it does not count, nor does
    a device thrown away into `_` (`_ = torch.device(spec)` only checks a spelling), nor a
    label that no torch device takes (`orig_device = "cpu" if ... else "gpu"`).

    ## Why is this bad
    The file already decides where tensors live; a hardcoded `"cuda"` ignores that choice,
    so the code breaks on CPU-only machines and mixes devices on multi-GPU ones
    ("Expected all tensors to be on the same device").

    ## Example
    ```python
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    x = batch.cuda()
    ```

    ## Use instead
    ```python
    x = batch.to(device)
    ```
    """

    code = "TL105"
    name = "hardcoded-device"
    severity = "warning"
    fix_safety = "safe"

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        devices = dict(_device_variables(analysis))
        # The module's device variable serves every function of the file: a fact of the whole file.
        module_device = analysis.file_fact("TL105 the module's device variable", _module_device)
        devices.pop(analysis.module_scope, None)
        if module_device is not None:
            devices[analysis.module_scope] = module_device
        if not devices:
            return
        by_hand: bool | None = None  # asked only of a call that names a GPU by number
        # The module's device is the process's current CUDA device (`device = torch.device("cuda",
        # local_rank)`, then `torch.cuda.set_device(device)`): a bare `.cuda()` is that very device.
        current_cuda = module_device is not None and analysis.file_fact(
            "TL105 the module's device is the current CUDA device", _module_device_is_current_cuda)
        device_in: dict[FunctionInfo, tuple[str | None, ast.Assign | None]] = {}
        for call in analysis.calls:
            name = call_name(call)
            if not (name in ("cuda", "to") and isinstance(call.func, ast.Attribute)) and keyword(call, "device") is None:
                continue  # none of the three forms below (most calls: skipped before any lookup)
            function = analysis.context(call).function
            if function not in device_in:
                device_in[function] = _device_in(analysis, devices, function)
            device, defined = device_in[function]
            if device is None or analysis.call_qualname(call) == "torch.device":
                continue
            if current_cuda and defined is module_device and _names_current_cuda(call):
                continue
            if defined is not None and defined is module_device and not function.is_module \
                    and analysis.file_fact("TL105 the module's device is one GPU named by number", _module_device_pinned) \
                    and not _reads_name(function, device):
                continue  # the module pins one model to a GPU by number; this function places its own work
            if _gpu_index(call) is not None:
                if by_hand is None:
                    by_hand = analysis.file_fact("TL105 GPUs placed by hand", _places_by_hand)
                if by_hand:
                    continue
            # A function the module runs before it assigns the device, or module code above that
            # assignment (a notebook cell before the one defining it): `.to(device)` would raise NameError.
            above = _above_module_device(function, defined, module_device, call)
            early = above or _runs_before_device(analysis, function, defined, module_device)
            if name == "cuda" and isinstance(call.func, ast.Attribute) and analysis.qualname(call.func) is None:
                if _hardcoded_cuda_call(analysis, call) and not under_cuda_guard(analysis, call):
                    shown = f"`.{ast.unparse(call)[len(ast.unparse(call.func.value)) + 1:]}`"
                    # `.cuda(args.gpu)`: the index may not be the device variable's: offered, not safe.
                    safety = "safe" if _constant_index(call) and not early else "unsafe"
                    yield self._report(method_span(call), shown, device, defined, "cuda", safety, above)
            elif name == "to" and isinstance(call.func, ast.Attribute):
                target = call.args[0] if call.args else getattr(keyword(call, "device"), "value", None)
                if _is_cuda_string(target) and not under_cuda_guard(analysis, call):
                    yield self._report(method_span(call), f"`.to({ast.unparse(target)})`", device, defined, "to",
                                       "unsafe" if early else "safe", above)
            else:
                kw = keyword(call, "device")
                if kw is not None and _is_cuda_string(kw.value) and not under_cuda_guard(analysis, call) \
                        and not _run_on_each_device(analysis, call) and not _own_device_strings(analysis, call):
                    span = (kw.lineno, kw.col_offset, kw.end_lineno, kw.end_col_offset)
                    yield self._report(span, f"`device={ast.unparse(kw.value)}`", device, defined, "keyword",
                                       "unsafe" if early else "safe", above)

    def _report(self, span, what: str, device: str, defined: ast.AST | None, form: str,
                safety: str = "safe", above: bool = False) -> Finding:
        use = (f"Define `{device}` before this line and use it instead" if above else f"Use `{device}` instead")
        message = (
            f"{what} hardcodes the GPU although this file defines `{device}`{' further down' if above else ''}; "
            f"on a CPU-only machine or another GPU the tensors end up on different devices. {use}."
        )
        finding = self.finding_at(span, message, f"Use `{device}`",
                                  data={"device": device, "form": form, "safety": safety})
        if defined is not None:
            finding.related.append(Related.at(defined, f"`{device}` is defined here"))
        if finding.fix is not None and safety != finding.fix.safety:
            finding.fix = FixInfo(finding.fix.title, safety)
        return finding


def _device_in(analysis: Analysis, devices: dict[FunctionInfo, ast.Assign], function: FunctionInfo
               ) -> tuple[str | None, ast.Assign | None]:
    """(the device variable code in `function` should use, the assignment that defines it
    when it is not a parameter of the function)."""
    defined = devices.get(function) or devices.get(analysis.module_scope)
    device = (devices[function].targets[0].id if function in devices else _device_parameter(function)) or (
        defined.targets[0].id if defined is not None else None)
    if defined is not None and defined.targets[0].id != device:
        defined = None  # a parameter of the function is the device variable here
    return device, defined


def _run_on_each_device(analysis: Analysis, call: ast.Call) -> bool:
    """`time_preds(model, device="cuda")` where another call of the same function of this file
    passes `device="cpu"`: the same routine is run on each device in turn (a CPU/GPU timing
    comparison), so the literal is the point, not a device variable ignored."""
    if not (isinstance(call.func, ast.Name) and analysis.function_named(call.func.id)):
        return False
    for other in analysis.call_sites.get(call.func.id, ()):
        kw = keyword(other, "device") if isinstance(other.func, ast.Name) else None
        if kw is not None and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str) \
                and not _is_cuda_string(kw.value):
            return True
    return False


# Libraries outside PyTorch whose `device=` takes their own device string, not a `torch.device`:
# the file's device variable is no drop-in there.
_NON_TORCH_DEVICE_APIS = {"ctranslate2", "onnxruntime", "faiss", "tensorflow", "jax", "cupy", "tensorrt",
                          "torchsummary"}  # `summary(model, size, device="cuda")` asserts "cuda" or "cpu"


def _own_device_strings(analysis: Analysis, call: ast.Call) -> bool:
    """`ctranslate2.Generator(path, device="cuda")`: a library that names devices its own way."""
    return (analysis.call_qualname(call) or "").split(".")[0] in _NON_TORCH_DEVICE_APIS


def _above_module_device(function: FunctionInfo, defined: ast.Assign | None, module_device: ast.Assign | None,
                         call: ast.Call) -> bool:
    """Module code above the module's device assignment (`gpu_a = cpu_a.cuda()` cells before
    `device = torch.device(...)`): the variable does not exist yet where the call runs."""
    return defined is not None and defined is module_device and function.is_module and call.lineno < defined.lineno


def _runs_before_device(analysis: Analysis, function: FunctionInfo, defined: ast.Assign | None,
                        module_device: ast.Assign | None) -> bool:
    """`function` uses the module's device variable, and a module-level statement calls it before
    the module assigns that variable (`model = load_model(...)` above `device = ...` in the
    `__main__` block): there the variable does not exist yet."""
    if defined is None or function.is_module or defined is not module_device:
        return False
    return any(analysis.context(site).function is analysis.module_scope and site.lineno < defined.lineno
               for site in analysis.callers(function))


def _hardcoded_cuda_call(analysis: Analysis, call: ast.Call) -> bool:
    """`.cuda()` / `.cuda(0)` on a value — not `super().cuda(device)` in an override."""
    target = call.func.value
    if isinstance(target, ast.Call) and isinstance(target.func, ast.Name) and target.func.id == "super":
        return False
    if call.keywords and any(kw.arg in ("device", None) for kw in call.keywords):
        return False
    if len(call.args) > 1:
        return False
    return all(isinstance(a, (ast.Constant, ast.Name, ast.Attribute)) and not _is_device_value(analysis, call, a)
               for a in call.args)


def _places_by_hand(analysis: Analysis) -> bool:
    """`.cuda(0)` here and `.cuda(2)` there: the file places modules on GPUs by hand (model or
    pipeline parallelism), which one device variable cannot express."""
    return len({index for call in analysis.calls if (index := _gpu_index(call)) is not None}) > 1


def _gpu_index(call: ast.Call) -> int | None:
    """The GPU a call names by number: `.cuda(2)`, `.to("cuda:1")`, `device="cuda:0"`."""
    name = call_name(call)
    if name == "cuda" and isinstance(call.func, ast.Attribute) and len(call.args) == 1 and not call.keywords:
        arg = call.args[0]
        return arg.value if isinstance(arg, ast.Constant) and type(arg.value) is int else None
    target = call.args[0] if name == "to" and isinstance(call.func, ast.Attribute) and call.args else None
    if target is None:
        target = getattr(keyword(call, "device"), "value", None)
    if _is_cuda_string(target) and target.value.startswith("cuda:") and target.value[5:].isdigit():
        return int(target.value[5:])
    return None


def _constant_index(call: ast.Call) -> bool:
    return all(isinstance(a, ast.Constant) and isinstance(a.value, int) for a in call.args)


def _is_device_value(analysis: Analysis, call: ast.Call, node: ast.AST) -> bool:
    """`.cuda(device)`, `.cuda(self.device)`: the device is chosen by a variable, not hardcoded."""
    if isinstance(node, ast.Constant):
        return not isinstance(node.value, int) or isinstance(node.value, bool)
    if isinstance(node, ast.Name) and analysis.roles_for(call).is_device(node.id):
        return True
    last = node.id if isinstance(node, ast.Name) else node.attr
    return bool(DEVICE_NAME.match(last))


def _is_cuda_string(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.split(":")[0] == "cuda"


def _device_parameter(function: FunctionInfo) -> str | None:
    """`def train_epoch(model, loader, device):` the caller chose the device."""
    return next((p for p in function.params if DEVICE_NAME.match(p)), None)


def _device_variables(analysis: Analysis) -> dict[FunctionInfo, ast.Assign]:
    """The device variable each function defines (`device = torch.device(...)` or similar),
    first one wins; the module's is under `analysis.module_scope`.  Once per version: the
    rule and the module's device variable (`_module_device`) both read it."""
    return analysis.facts.get_or_compute(_DEVICE_VARIABLES, lambda: _find_device_variables(analysis))


_DEVICE_VARIABLES: FactKey[dict[FunctionInfo, ast.Assign]] = FactKey("tl105.device_variables")


def _find_device_variables(analysis: Analysis) -> dict[FunctionInfo, ast.Assign]:
    found: dict[FunctionInfo, ast.Assign] = {}
    parts = {id(statement): part for statement, part in zip(analysis.tree.body, analysis.walk_parts)}
    kept = analysis.statement_facts.each_under(
        _DEVICE_ASSIGNMENTS, classification_facts(analysis),
        lambda statement: _device_assignments(analysis, parts[id(statement)].statements))
    for assignments in kept:
        for stmt in assignments:
            found.setdefault(analysis.context(stmt).function, stmt)
    return found


def _module_device_is_current_cuda(analysis: Analysis) -> bool:
    """The module's device variable is a CUDA device with no CPU fallback (`torch.device("cuda",
    local_rank)`), and the module makes it the current device (`torch.cuda.set_device(device)`):
    a CUDA-only program, typically one process per GPU, whose bare "cuda" is that device."""
    defined = _module_device(analysis)
    if defined is None or not _cuda_only(defined.value):
        return False
    name = defined.targets[0].id
    return any(analysis.context(call).function is analysis.module_scope and call.args
               and isinstance(call.args[0], ast.Name) and call.args[0].id == name
               for call in analysis.calls_to("torch.cuda.set_device"))


def _cuda_only(value: ast.AST) -> bool:
    """`torch.device("cuda", rank)`, `torch.device(f"cuda:{rank}")`: CUDA whatever happens."""
    if not (isinstance(value, ast.Call) and call_name(value) == "device" and value.args):
        return False
    first = value.args[0]
    if isinstance(first, ast.JoinedStr):
        return bool(first.values) and isinstance(first.values[0], ast.Constant) \
            and str(first.values[0].value).startswith("cuda:")
    return _is_cuda_string(first)


def _one_numbered_gpu(value: ast.AST) -> bool:
    """`torch.device("cuda:1")`, `torch.device("cuda", 1)`, `torch.device("cuda:{}".format(1))`,
    `"cuda:1"`: one GPU named by a constant number, with no CPU fallback."""
    if isinstance(value, ast.Call) and call_name(value) == "device" and value.args:
        if len(value.args) == 2:
            return _is_cuda_string(value.args[0]) and value.args[0].value == "cuda" \
                and isinstance(value.args[1], ast.Constant) and type(value.args[1].value) is int
        value = value.args[0]
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "format" \
            and isinstance(value.func.value, ast.Constant) and value.func.value.value == "cuda:{}" \
            and len(value.args) == 1 and not value.keywords:
        index = value.args[0]
        return isinstance(index, ast.Constant) and type(index.value) is int
    return _is_cuda_string(value) and value.value[5:].isdigit() and value.value.startswith("cuda:")


def _module_device_pinned(analysis: Analysis) -> bool:
    """Every module-level assignment of the module's device variable names one GPU by a constant
    number (`rw_device = torch.device("cuda:1")`): no CPU fallback anywhere (not `device =
    torch.device("cuda:0")` in an `if torch.cuda.is_available():` whose `else` says "cpu")."""
    defined = _module_device(analysis)
    if defined is None:
        return False
    name = defined.targets[0].id
    assignments = analysis.roles_for(analysis.module_scope).assignments.get(name, [])
    return bool(assignments) and all(not a.unpacked and a.value is not None and _one_numbered_gpu(a.value)
                                     for a in assignments)


def _reads_name(function: FunctionInfo, name: str) -> bool:
    return any(isinstance(node, ast.Name) and node.id == name for node in ast.walk(function.node))


def _names_current_cuda(call: ast.Call) -> bool:
    """`.cuda()`, `.to("cuda")`, `device="cuda"`: the current CUDA device, no index named."""
    if call_name(call) == "cuda" and isinstance(call.func, ast.Attribute):
        return not call.args and all(kw.arg == "non_blocking" for kw in call.keywords)
    target = call.args[0] if call_name(call) == "to" and isinstance(call.func, ast.Attribute) and call.args else None
    if target is None:
        target = getattr(keyword(call, "device"), "value", None)
    return isinstance(target, ast.Constant) and target.value == "cuda"


def _module_device(analysis: Analysis) -> ast.Assign | None:
    """The module's device variable (its first assignment at module level), or None."""
    return _device_variables(analysis).get(analysis.module_scope)


# Per top-level statement: its device assignments, while what `constructed_kind` reads stays the same.
_DEVICE_ASSIGNMENTS: FactKey[list[ast.Assign]] = FactKey("tl105.device_assignments")


def _device_assignments(analysis: Analysis, statements: list[ast.stmt]) -> list[ast.Assign]:
    """`device = torch.device(...)`, `device = "cuda" if ... else "cpu"`, `device = accelerator.device`
    among `statements`, in order."""
    found = []
    for stmt in statements:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name, value = stmt.targets[0].id, stmt.value
            if name == "_" or _names_where_results_are_kept(name):
                # `_ = torch.device(spec)` only checks the spelling and throws the device away;
                # `gather_device`: where outputs are collected, not where the model runs
                continue
            if constructed_kind(analysis, value) == "device" or (DEVICE_NAME.match(name) and (
                    isinstance(value, ast.IfExp) and _may_name_a_device(value) or _launcher_device(value))):
                found.append(stmt)
    return found


# The device types torch names by string (`torch.device("mps")`).
_TORCH_DEVICE_TYPES = frozenset({"cpu", "cuda", "mps", "xpu", "xla", "meta", "hpu", "npu", "mtia", "ipu", "lazy",
                                 "privateuseone"})


def _may_name_a_device(value: ast.AST) -> bool:
    """Every arm of `"cuda" if ... else "cpu"` may be a torch device; not `"cpu" if ... else
    "gpu"` (sam2's `orig_device`: a label saying where a tensor came from, which torch would
    reject as a device)."""
    if isinstance(value, ast.IfExp):
        return _may_name_a_device(value.body) and _may_name_a_device(value.orelse)
    if isinstance(value, ast.Constant):
        return isinstance(value.value, str) and value.value.split(":")[0] in _TORCH_DEVICE_TYPES
    return True


_LAUNCHER = re.compile(r"(?:^|_)(?:accelerator|fabric)$", re.IGNORECASE)


def _launcher_device(value: ast.AST) -> bool:
    """`accelerator.device`, `fabric.device`: the device accelerate or Fabric chose for this process."""
    return isinstance(value, ast.Attribute) and value.attr == "device" and isinstance(value.value, ast.Name) \
        and bool(_LAUNCHER.search(value.value.id))


# A device variable qualified by one of these words names where results are gathered, stored or
# offloaded (`gather_device = torch.device("cpu") if gather_on_cpu else ...`), or where the data
# loader keeps its tensors (`dataloader_device = 'cpu' if args.cpu_dataloader else 'cuda'`), a
# choice made beside the device the computation runs on: a `.cuda()` next to it is not that
# choice ignored.
_KEEPING_WORDS = {"gather", "storage", "store", "offload", "host", "cpu", "dataloader", "loader"}


def _names_where_results_are_kept(name: str) -> bool:
    return any(word in _KEEPING_WORDS for word in name.lower().split("_")[:-1])

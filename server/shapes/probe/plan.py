"""What to probe in a file, from what the static pass already knows.

Two kinds of request (see `worker.py`):

  * the file's script: its top-level tensor statements (`program.script_statements`),
    when it has any beyond imports and definitions;
  * a module class: each `nn.Module` subclass of the file whose `forward` the static pass
    ran with concrete input shapes (a call site such as `Net()(torch.randn(8, 1, 28, 28))`),
    or whose stated input shapes (annotations, shape comments) are concrete but for a
    leading batch, when the class is built with no arguments.  The batch is varied in a
    second run, so a size shown as `B` is checked to follow the batch.

Only requests whose inputs are certain are made: a probe that raises becomes an error
(TL502), so it must have run what the user's code would run.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from torch_lsp.roles import local_module_classes
from torch_lsp.shapes.probe.construction import construction_expression
from torch_lsp.shapes.probe.program import names_read, script_statements
from torch_lsp.shapes.values import Instance, Tensor

if TYPE_CHECKING:
    from torch_lsp.shapes.report import ShapeReport

PROBED_BATCH = 2  # a symbolic leading batch is run at this size, then at VARIED_BATCH
VARIED_BATCH = 3
DTYPES = {"long": "int64", "bool": "bool", "float": "float32", None: "float32"}


@dataclass(frozen=True)
class ProbeTarget:
    """One request to the worker and what the answer is compared with."""

    kind: str  # "script" | "module"
    label: str  # "the file's top-level code" | "Net()"
    request: dict = field(hash=False)
    class_name: str | None = None
    forward: ast.FunctionDef | None = field(default=None, hash=False, compare=False)


def script_target(path: str, source: str) -> ProbeTarget | None:
    try:
        _, statements = script_statements(source)
    except SyntaxError:
        return None
    definitions = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    if not any(not isinstance(s, definitions) for s in statements):
        return None
    return ProbeTarget("script", "the file's top-level code", {"op": "script", "path": path, "source": source})


def concrete_inputs(frame, params: list[str], symbolic_batch: bool) -> list[dict] | None:
    """Input specs for the worker from the frame's parameter values, or None when one is not
    a tensor of known sizes (a leading symbol is allowed, as the batch, when `symbolic_batch`)."""
    inputs = []
    for name in params:
        value = frame.params.get(name)
        if value.__class__ is not Tensor or value.variadic or not value.dims:
            return None
        dims = [d.to_json() if d is not None else None for d in value.dims]
        batch_dim = None
        if symbolic_batch and isinstance(dims[0], str) and all(isinstance(d, int) for d in dims[1:]):
            dims[0], batch_dim = PROBED_BATCH, 0
        if not all(isinstance(d, int) and d > 0 for d in dims):
            return None
        inputs.append({"shape": dims, "dtype": DTYPES.get(value.dtype, "float32"), "batch_dim": batch_dim})
    return inputs


def module_targets(path: str, source: str, report: "ShapeReport") -> list[ProbeTarget]:
    """A request per module class whose forward has certain inputs (one per class: the first)."""
    engine = report.engine
    targets: dict[str, ProbeTarget] = {}
    for node in report.analysis.classes.values():
        forward = forward_of(node)
        if forward is None or node.name in targets:
            continue
        params = [a.arg for a in forward.args.args[1:]]
        if not params or forward.args.vararg or forward.args.kwonlyargs:
            continue
        for frame in engine.frames_by_function.get(forward, ()):
            init = initializer(node, frame.self_value, report.analysis)
            if init is None:
                continue
            inputs = concrete_inputs(frame, params, symbolic_batch=frame.standalone)
            if inputs is None:
                continue
            targets[node.name] = module_target(path, source, report, node, forward, init, inputs)
            break
    return list(targets.values())


def initializer(node: ast.ClassDef, instance, analysis) -> str | None:
    """The expression that builds the instance this frame ran on: `Net()` when the class
    needs no arguments, else how the file builds it (`GPT(GPTConfig(n_layer=2))`), when the
    engine built this instance from that concrete construction."""
    if not isinstance(instance, Instance):
        return None
    if instance.label == f"{node.name}()" or (instance.standalone and constructible_without_arguments(node)):
        return f"{node.name}()"
    if instance.standalone:
        return None
    return construction_expression(node.name, analysis)


def constructed_optimizer(analysis) -> str | None:
    """The `torch.optim` optimizer the file constructs (`Adam`, `SGD`, ...), for the memory
    estimate's optimizer state; None when it builds none or several kinds."""
    kinds = {qualname.rsplit(".", 1)[-1] for call in analysis.calls
             if (qualname := analysis.call_qualname(call) or "").startswith("torch.optim.")
             and qualname.count(".") == 2 and qualname.rsplit(".", 1)[-1][:1].isupper()}
    return kinds.pop() if len(kinds) == 1 else None


def constructible_without_arguments(node: ast.ClassDef) -> bool:
    init = next((s for s in node.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
    if init is None:
        return True
    args = init.args
    required = len(args.args) - 1 - len(args.defaults)
    return required <= 0 and all(d is not None for d in args.kw_defaults)


def given_target(path: str, source: str, report: "ShapeReport", node: ast.ClassDef,
                 given: list[dict]) -> ProbeTarget | None:
    """A request for a class on the input shapes the user gave ("Probe shapes…"): built the
    way the file builds it, or with no arguments; a leading named dim is the batch."""
    forward = forward_of(node)
    if forward is None:
        return None
    if constructible_without_arguments(node):
        init = f"{node.name}()"
    else:
        init = construction_expression(node.name, report.analysis)
        if init is None:
            return None
    inputs = []
    for spec in given:
        dims = list(spec["dims"])
        batch_dim = 0 if dims and isinstance(dims[0], str) else None
        if batch_dim is not None:
            dims[0] = PROBED_BATCH
        inputs.append({"shape": dims, "dtype": spec["dtype"], "batch_dim": batch_dim})
    return module_target(path, source, report, node, forward, init, inputs)


def module_target(path: str, source: str, report: "ShapeReport", node: ast.ClassDef, forward: ast.FunctionDef,
                  init: str, inputs: list[dict]) -> ProbeTarget:
    """The request that builds the class with `init` and runs it on `inputs` (a symbolic
    batch is run at a second size too)."""
    request = {"op": "probe", "path": path, "source": source,
               "roots": sorted({node.name} | names_read(ast.parse(init, mode="eval"))),
               "init": init, "inputs": inputs, "memory": True,
               "optimizer": constructed_optimizer(report.analysis)}
    if any(spec["batch_dim"] is not None for spec in inputs):
        request["vary_batch"] = VARIED_BATCH
    return ProbeTarget("module", init, request, node.name, forward)


def forward_of(node: ast.ClassDef) -> ast.FunctionDef | None:
    return next((s for s in node.body if isinstance(s, ast.FunctionDef) and s.name == "forward"), None)


def probe_targets(path: str, source: str, report: "ShapeReport",
                  given: dict[str, list[dict]] | None = None) -> list[ProbeTarget]:
    """Module targets first (when the script meets the same error, theirs says more: the
    input); for a class the user gave inputs for, theirs replace the file's."""
    targets = {t.class_name: t for t in module_targets(path, source, report)}
    module_classes = local_module_classes(report.analysis)
    for class_name, inputs in (given or {}).items():
        node = module_classes.get(class_name)
        target = given_target(path, source, report, node, inputs) if node is not None else None
        if target is not None:
            targets[class_name] = target
    script = script_target(path, source)
    return list(targets.values()) + ([script] if script else [])

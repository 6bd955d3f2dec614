"""TL409 missing-compile: flags a file that trains a model without ever calling `torch.compile`."""
from __future__ import annotations

import ast
from typing import Iterator

from torch_lsp.analysis import Analysis, construction_of
from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import Finding, Rule
from torch_lsp.roles import MODEL_WRAPPERS, reaching_assignment
from torch_lsp.shapes import infer_shapes
from torch_lsp.shapes.parameters import module_parameters
from torch_lsp.shapes.values import Instance, Layer
from torch_lsp.syntax_nodes import call_name, keyword


@register
class MissingCompile(Rule):
    """
    ## What it does
    Flags a file that trains a model (backward and optimizer steps in a loop) without ever
    calling `torch.compile`. Not in test files, nor for a loop of a literal few steps
    (`for _ in range(10)`, a demo the compile warm-up would not pay back), nor for a model
    built from `nn.LSTM`/`nn.GRU`/`nn.RNN`, also through the classes of the file it builds,
    or picked from a dict of such classes (Dynamo graph-breaks at them, so compiling
    captures little), nor for a model whose parameters are all known and number at most a
    thousand (a `nn.Linear(1, 1)` fitted to a few points: nothing to compile), nor for a model
    prepared by an accelerate `Accelerator` built to compile (`dynamo_backend="inductor"`,
    `dynamo_plugin=TorchDynamoPlugin(...)`: `prepare` compiles it). A model run under
    `torch.no_grad()` in the loop (a frozen backbone feeding a trained head) is not the one
    trained. Off by default:
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
        if analysis.is_test_file or any(
                analysis.call_qualname(c) == "torch.compile" or call_name(c) == "compile" for c in analysis.calls):
            return  # a test runs a few steps to check behaviour, not to be fast
        for loop in analysis.training_loops:
            if not analysis.is_step_loop(loop) or not analysis.optimizer_steps(loop, direct=True):
                continue  # a smoke test's one backward pass trains nothing
            if _few_steps(loop):
                continue  # `for _ in range(10)`: the compile warm-up would not be paid back
            roles = analysis.roles_for(loop.function)
            for call in loop.calls:
                if analysis.context(call).grad_disabled:
                    continue  # a frozen backbone run under `no_grad` is not the model trained
                model = roles.model_name(call)
                if model and _runs_recurrent_layers(analysis, loop.function, model, call):
                    break  # Dynamo graph-breaks at nn.LSTM/GRU/RNN: compile would capture little
                if model and _tiny_model(analysis, call):
                    break  # `nn.Linear(1, 1)` fitted to a few points: nothing to compile
                if model and _compiled_by_accelerate(analysis, model):
                    return  # the script's `Accelerator` compiles the model in `prepare`
                if model:
                    yield self.finding(call, f"`{model}` is trained without `torch.compile`. Try "
                                             f"`{model} = torch.compile({model})` for faster steps.")
                    return


def _compiled_by_accelerate(analysis: Analysis, model: str) -> bool:
    """`accelerator.prepare(model, ...)` of an `Accelerator` the script sets up to compile
    (`dynamo_backend="inductor"`, `dynamo_plugin=TorchDynamoPlugin(...)`): `prepare`
    compiles the model, with no `torch.compile` call in the file."""
    if not any(_asks_for_dynamo(call) for call in analysis.calls_to("accelerate.Accelerator")):
        return False
    return any(isinstance(arg, ast.Name) and arg.id == model
               for call in analysis.iter_calls("prepare", "prepare_model") for arg in call.args)


def _asks_for_dynamo(accelerator: ast.Call) -> bool:
    """`Accelerator(dynamo_backend=...)` other than "no", or `Accelerator(dynamo_plugin=...)`."""
    for name in ("dynamo_backend", "dynamo_plugin"):
        option = keyword(accelerator, name)
        if option is None:
            continue
        value = option.value
        if not (isinstance(value, ast.Constant) and (value.value is None or str(value.value).lower() == "no")):
            return True
    return False


FEW_STEPS = 100
TINY_MODEL = 1_000  # parameters: a toy regression, whose steps are a few tiny kernels


def _tiny_model(analysis: Analysis, call: ast.Call) -> bool:
    """The called model is a torch layer or an instance of the file's module classes built
    from known arguments, whose parameter count is known and at most `TINY_MODEL`."""
    module = infer_shapes(analysis).value_of(call.func)
    if not (isinstance(module, Layer) or isinstance(module, Instance) and not module.standalone):
        return False  # anything else counts as no parameters: not a proof of a small model
    count = module_parameters(module)
    known = count.as_int() if count is not None else None
    return known is not None and 0 < known <= TINY_MODEL
_RECURRENT_LAYERS = {"torch.nn.LSTM", "torch.nn.GRU", "torch.nn.RNN"}


def _runs_recurrent_layers(analysis: Analysis, function, model: str, at: ast.AST) -> bool:
    """The model is a class of this file that builds `nn.LSTM`/`nn.GRU`/`nn.RNN`, or is
    built from such modules (`Seq2Seq(encoder, decoder)` with `encoder = Encoder(...)`)."""
    for built in _built_from(analysis, function, model, at, hops=3):
        parts = [built] + [part for a in built.args if isinstance(a, ast.Name)
                           for part in _built_from(analysis, analysis.context(built).function, a.id, built, hops=2)]
        if any(_builds_recurrent_layer(analysis, part) for part in parts):
            return True
    return False


def _built_from(analysis: Analysis, function, name: str, at: ast.AST, hops: int) -> list[ast.Call]:
    """The calls `name` was built by, as seen at `at`: through `.to(device)`-style rebinding
    (`model = model.to(device)`) and, for a parameter, what each caller passes."""
    if hops < 0:
        return []
    if name in function.params and not function.is_module:
        found = []
        for site in analysis.callers(function):
            passed = analysis.argument_for(site, function, name)
            if isinstance(passed, ast.Name):
                found += _built_from(analysis, analysis.context(site).function, passed.id, site, hops - 1)
        return found
    built = construction_of(analysis, function, name, at, unwrap=tuple(MODEL_WRAPPERS))
    while isinstance(built, ast.Call) and isinstance(built.func, ast.Attribute) and built.func.attr in (
            "to", "cuda", "cpu", "float", "double", "half"):
        built = built.func.value
    if isinstance(built, ast.Name):
        return _built_from(analysis, analysis.context(built).function, built.id, built, hops - 1)
    return [built] if isinstance(built, ast.Call) else []


def _builds_recurrent_layer(analysis: Analysis, value: ast.AST | None, depth: int = 0) -> bool:
    """`nn.LSTM(...)`, or a class of the file that builds one, also through the classes it
    builds (`GeniePathLayer` building `Depth` building `nn.LSTM`), or a class picked from a
    dict of such classes (`{'GeniePath': GeniePath, ...}[args.model](...)`)."""
    if not isinstance(value, ast.Call) or depth > 3:
        return False
    if analysis.call_qualname(value) in _RECURRENT_LAYERS:
        return True
    names = _class_names_called(analysis, value.func)
    return bool(names) and all(
        any(_builds_recurrent_layer(analysis, c, depth + 1)
            for cls in analysis.tree.body if isinstance(cls, ast.ClassDef) and cls.name == name
            for c in ast.walk(cls) if isinstance(c, ast.Call))
        for name in names)


def _class_names_called(analysis: Analysis, func: ast.AST) -> list[str]:
    """`Net` for `Net(...)`; every value of the dict literal for `models[key](...)`."""
    if isinstance(func, ast.Name):
        return [func.id]
    if not (isinstance(func, ast.Subscript) and isinstance(func.value, ast.Name)):
        return []
    assignment = reaching_assignment(analysis, func.value)
    table = assignment.value if assignment is not None else None
    if not isinstance(table, ast.Dict) or not all(isinstance(v, ast.Name) for v in table.values):
        return []
    return [v.id for v in table.values]


def _few_steps(loop) -> bool:
    """The step loop runs a literal, small number of times (`range(10)`) and no loop
    around it repeats it: a demo of an API, not a training run."""
    node = loop.node
    if loop.parent is not None or not isinstance(node, ast.For):
        return False
    iterable = node.iter
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "enumerate":
        iterable = iterable.args[0] if iterable.args else iterable
    if not (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "range"):
        return False
    bounds = [a.value for a in iterable.args if isinstance(a, ast.Constant) and isinstance(a.value, int)]
    return len(bounds) == len(iterable.args) and 1 <= len(bounds) <= 2 and bounds[-1] - (
        bounds[0] if len(bounds) == 2 else 0) <= FEW_STEPS

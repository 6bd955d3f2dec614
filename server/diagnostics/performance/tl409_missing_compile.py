"""TL409 missing-compile: flags a file that trains a model without ever calling `torch.compile`."""
from __future__ import annotations

import ast
from typing import Iterator

from torch_lsp.analysis import Analysis, construction_of, constructions_of
from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import Finding, Rule
from torch_lsp.roles import MODEL_WRAPPERS, reaching_assignment
from torch_lsp.shapes import infer_shapes
from torch_lsp.shapes.parameters import module_parameters, unknown_submodule
from torch_lsp.shapes.values import DictValue, Instance, Layer, ListValue
from torch_lsp.syntax_index import syntax_index
from torch_lsp.syntax_nodes import call_name, keyword, unmoved
from torch_lsp.workspace_files import project_definition


@register
class MissingCompile(Rule):
    """
    ## What it does
    Flags a file that trains a model (backward and optimizer steps in a loop) without ever
    calling `torch.compile`. Not in test files, nor for a loop of a literal few steps
    (`for _ in range(10)`, a demo the compile warm-up would not pay back), nor for a model
    built from `nn.LSTM`/`nn.GRU`/`nn.RNN`, by a class or factory of this file or of a project
    file it imports, or picked from a dict of such classes (Dynamo graph-breaks at them, so
    compiling captures little), nor for a model whose parameters are all known and number at
    most a thousand (a `nn.Linear(1, 1)` fitted to a few points: nothing to compile), nor for
    a model that is one `nn.Linear` of any size, bare or the only layer with parameters of
    its class (a logistic or softmax regression: one matmul per step, nothing to fuse), nor for
    a model prepared by an accelerate `Accelerator` built to compile (`dynamo_backend="inductor"`,
    `dynamo_plugin=TorchDynamoPlugin(...)`: `prepare` compiles it). A model run under
    `torch.no_grad()` in the loop (a frozen backbone feeding a trained head, a DQN/SAC target
    network) is not the one trained, nor is a model built by a class of the project whose
    `forward` runs under `no_grad`/`inference_mode` (a frozen feature extractor), nor a model
    the file freezes with `requires_grad_(False)` and never trains again (no `.train()`, no
    read of its parameters or submodules, no adapter call: a frozen text encoder), nor is a
    model run by a loop whose optimizers only hold
    an explicit list of tensors (`optim.Adam([latent] + noises)`: a GAN projection optimises
    its input), nor is a model whose output a gradient penalty differentiates with
    `torch.autograd.grad(..., create_graph=True)` (R1, WGAN-GP's critic, StyleGAN2's path
    length): `torch.compile` does not support that double backward; nor is a model built
    anew in the loop that trains it (`inner_net = copy.deepcopy(self.network)` per meta-task:
    compiling it would recompile every iteration), nor any model of a file that trains with
    Opacus (a `PrivacyEngine` or `GradSampleModule`: its per-sample-gradient hooks do not
    support compiled models), nor any model of a file with a compile setting of its own
    (`args.use_compile`, `torch_compile=`, a `compile` parameter) but no `torch.compile` call:
    the setting is handed on to code that compiles elsewhere, or turned off on purpose (a
    LoRA script whose patched `forward` does not compile). Off by default:
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
    needs_shapes = True  # a toy model's size comes from the shape pass: sent in the second step
    whole_file = True  # one finding per file, none where the file compiles anything

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        if analysis.is_test_file or any(
                analysis.call_qualname(c) == "torch.compile" or call_name(c) == "compile" for c in analysis.calls):
            return  # a test runs a few steps to check behaviour, not to be fast
        if _made_private_by_opacus(analysis):
            return  # Opacus' per-sample-gradient hooks (GradSampleModule) do not support compiled models
        if analysis.file_fact("TL409 the file has a compile setting", _has_compile_switch):
            return  # `args.use_compile` forced off, `torch_compile=` handed on: the file already decides
        twice = _differentiated_twice(analysis)
        for loop in analysis.training_loops:
            steps = analysis.optimizer_steps(loop, direct=True)
            if not analysis.is_step_loop(loop) or not steps:
                continue  # a smoke test's one backward pass trains nothing
            if _few_steps(loop):
                continue  # `for _ in range(10)`: the compile warm-up would not be paid back
            if all(_steps_only_tensors(analysis, loop.function, step) for step in steps):
                continue  # the loop optimises inputs (a latent, noise maps), not a model
            roles = analysis.roles_for(loop.function)
            for call in loop.calls:
                if analysis.context(call).grad_disabled:
                    continue  # a frozen backbone run under `no_grad` is not the model trained
                model = roles.model_name(call)
                if model and _frozen_in_file(analysis, model):
                    continue  # `text_encoder.requires_grad_(False)` and nothing trains it: a frozen encoder
                if model and _frozen_by_its_class(analysis, loop.function, model, call):
                    continue  # its class runs `forward` under `inference_mode`: a frozen feature extractor
                if model and _built_each_iteration(roles, loop, model, call):
                    continue  # a fresh copy per iteration (MLDG's deepcopy): compiling it recompiles every time
                if model in twice:
                    continue  # a gradient penalty backpropagates through its gradient: compiled graphs refuse that
                if model and _runs_recurrent_layers(analysis, loop.function, model, call):
                    break  # Dynamo graph-breaks at nn.LSTM/GRU/RNN: compile would capture little
                if model and (_tiny_model(analysis, call) or _one_linear_layer(analysis, call)
                              or _small_from_every_caller(analysis, loop.function, model, call)):
                    break  # `nn.Linear(1, 1)` fitted to a few points, a logistic regression: nothing to compile
                if model and _compiled_by_accelerate(analysis, model):
                    return  # the script's `Accelerator` compiles the model in `prepare`
                if model:
                    yield self.finding(call, f"`{model}` is trained without `torch.compile`. Try "
                                             f"`{model} = torch.compile({model})` for faster steps.")
                    return


def _has_compile_switch(analysis: Analysis) -> bool:
    """The file names a setting of its own about compiling: an attribute, name, keyword or
    parameter with `compile` as one of its underscore-separated words (`args.use_compile`,
    `cfg.compile`, `TrainingArguments(torch_compile=...)`, `def train(model, compile=False)`).
    With no `torch.compile` call in the file, that switch is handed on to code that compiles
    elsewhere, or is turned off on purpose (a LoRA script forcing `args.use_compile = 0`
    because its patched `forward` does not compile): whether to compile is already decided,
    and "try `torch.compile`" would second-guess it. `is_compiled_module` (unwrapping a model
    compiled elsewhere) names no such setting."""
    index = syntax_index(analysis)
    spelled = [node.attr for node in index.of_type(ast.Attribute)]
    spelled += [node.id for node in index.of_type(ast.Name)]
    spelled += [node.arg for node in index.of_type(ast.keyword) if node.arg]
    spelled += [node.arg for node in index.of_type(ast.arg)]
    return any("compile" in word.lower().split("_") for word in spelled)


def _built_each_iteration(roles, loop, model: str, call: ast.Call) -> bool:
    """The binding of `model` that reaches `call` is a statement of the loop itself
    (`inner_net = copy.deepcopy(self.network)` per meta-task): each iteration trains a new
    module, which `torch.compile` would compile anew every time."""
    assignment = roles.last_assignment(model, call)
    return assignment is not None and any(stmt is assignment.statement for stmt in loop.statements)


# Opacus' entry points that wrap the model in a `GradSampleModule`, whose hooks capture
# per-sample activations and gradients: compiled models are not supported there (Opacus
# points to its functorch mode instead).
_OPACUS_PRIVATE = {"opacus.PrivacyEngine", "opacus.privacy_engine.PrivacyEngine", "opacus.GradSampleModule",
                   "opacus.grad_sample.GradSampleModule", "opacus.grad_sample.grad_sample_module.GradSampleModule"}


def _made_private_by_opacus(analysis: Analysis) -> bool:
    """The file builds an Opacus `PrivacyEngine` (whose `make_private` wraps the model) or a
    `GradSampleModule` itself."""
    return any(analysis.call_qualname(call) in _OPACUS_PRIVATE for call in analysis.calls)


def _frozen_in_file(analysis: Analysis, model: str) -> bool:
    """The file freezes `model` (`text_encoder.requires_grad_(False)`) and nothing trains any of
    it again: no `model.train()`, no other `requires_grad_` call on it, no read of its parameters
    or submodules (`model.parameters()` for an optimizer, `for n, m in unet.named_modules():`
    unfreezing some), and it is handed to no adapter call (`get_peft_model(unet, config)`,
    `unet.add_adapter(lora_config)`): a frozen encoder run beside the model trained."""
    frozen = False
    for call in analysis.calls:
        func = call.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == model:
            if func.attr == "requires_grad_" and len(call.args) == 1 and not call.keywords \
                    and isinstance(call.args[0], ast.Constant) and call.args[0].value is False:
                frozen = True
            elif func.attr in _TRAINING_TOUCHES or "adapter" in func.attr.lower() or "lora" in func.attr.lower():
                return False
        name = (call_name(call) or "").lower()
        if any(word in name for word in ("adapter", "lora", "peft", "prepare_model")) and any(
                isinstance(arg, ast.Name) and arg.id == model for arg in list(call.args) + [k.value for k in call.keywords]):
            return False
    if not frozen:
        return False
    # `model.weight`, `model.parameters` named anywhere else (an optimizer built over them)
    index = syntax_index(analysis)
    return not any(isinstance(node.value, ast.Name) and node.value.id == model
                   for attr in _PARAMETER_READS | _SUBMODULE_READS for node in index.attributes_named(attr))


# Calls on a model that (may) train it again after a freeze.
_TRAINING_TOUCHES = {"train", "requires_grad_", "parameters", "named_parameters", "modules", "named_modules",
                     "children", "named_children", "get_submodule", "apply"}
_SUBMODULE_READS = {"modules", "named_modules", "children", "named_children", "get_submodule"}


def _frozen_by_its_class(analysis: Analysis, function, model: str, call: ast.Call) -> bool:
    """`model` is built (here, or by every caller passing it in) from a class of the project
    whose `forward` runs all its work under `torch.no_grad()`/`torch.inference_mode()`
    (DINOv2's `ModelWithIntermediateLayers`): no gradient reaches it, so it is not trained."""
    built = constructions_of(analysis, function, model, call)
    return bool(built) and all(_forward_without_grad(analysis, value) for value in built)


def _forward_without_grad(analysis: Analysis, built: ast.AST) -> bool:
    """`built` calls a class of the project whose `forward` is decorated with, or does all its
    work inside, `torch.no_grad()`/`torch.inference_mode()` (read in the class's own file)."""
    found = project_definition(analysis, built.func) if isinstance(built, ast.Call) else None
    if found is None or not isinstance(found[1], ast.ClassDef):
        return False
    owner, cls = found
    forward = next((node for node in cls.body
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "forward"), None)
    if forward is None:
        return False
    if any(owner.grad_mode_effect(decorator) is True for decorator in forward.decorator_list):
        return True
    work = [stmt for stmt in forward.body if not isinstance(stmt, ast.Return)
            and not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant))]
    return bool(work) and all(isinstance(stmt, (ast.With, ast.AsyncWith))
                              and any(owner.grad_mode_effect(item.context_expr) is True for item in stmt.items)
                              for stmt in work)


def _differentiated_twice(analysis: Analysis) -> set[str]:
    """Models whose output a gradient penalty differentiates with `torch.autograd.grad(...,
    create_graph=True)` (WGAN-GP, R1, StyleGAN2's path length) and then backpropagates: a
    double backward through the model, which graphs compiled by `torch.compile`
    (AOTAutograd) do not support. Followed from the `outputs=` names to the model call that
    made them, in the function or, for a parameter, in what its callers pass (one level)."""
    models: set[str] = set()
    for call in analysis.calls_to("torch.autograd.grad"):
        option = keyword(call, "create_graph")
        if not (option is not None and isinstance(option.value, ast.Constant) and option.value.value is True):
            continue
        outputs = keyword(call, "outputs")
        outputs = outputs.value if outputs is not None else call.args[0] if call.args else None
        if outputs is None:
            continue
        function = analysis.context(call).function
        for name in {n.id for n in ast.walk(outputs) if isinstance(n, ast.Name)}:
            models |= _model_that_made(analysis, function, name, call, hops=1)
    return models


def _model_that_made(analysis: Analysis, function, name: str, at: ast.AST, hops: int) -> set[str]:
    """`pred = D(x)` -> {"D"}; for a parameter `D` or `pred`, what the callers pass."""
    if name in function.params and not function.is_module:
        if hops < 0:
            return set()
        found = {name}  # a model handed in (`D(interpolates)` with `D` a parameter)
        for site in analysis.callers(function):
            passed = analysis.argument_for(site, function, name)
            if isinstance(passed, ast.Name):
                found |= {passed.id} | _model_that_made(analysis, analysis.context(site).function, passed.id, site, hops - 1)
        return found
    assignment = analysis.roles_for(function).last_assignment(name, at)
    value = assignment.value if assignment is not None else None
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
        callee = value.func.id
        return {callee} | (_model_that_made(analysis, function, callee, at, hops) if callee in function.params else set())
    return set()


def _steps_only_tensors(analysis: Analysis, function, step: ast.Call) -> bool:
    """`optimizer.step()` of an optimizer built over an explicit list of tensors, none of them
    a module's parameters (`optim.Adam([latent] + noises)`): a projection or an adversarial
    input is optimised while the model stays fixed, so no model is trained here."""
    owner = step.func.value if isinstance(step.func, ast.Attribute) else None
    if not isinstance(owner, ast.Name):
        return False
    built = construction_of(analysis, function, owner.id, step)
    if not (isinstance(built, ast.Call) and built.args and isinstance(built.args[0], (ast.List, ast.BinOp))):
        return False  # `SGD(param_groups)`: groups built elsewhere, from whatever parameters
    return _explicit_tensors(analysis, function, built.args[0], built)


def _explicit_tensors(analysis: Analysis, function, params: ast.AST, at: ast.AST) -> bool:
    """A list display (or a sum of them and names) whose names are bound to anything but
    a module's parameters (`noises = []`, `latent = mean.detach().clone()`)."""
    if isinstance(params, ast.BinOp) and isinstance(params.op, ast.Add):
        return _explicit_tensors(analysis, function, params.left, at) and \
            _explicit_tensors(analysis, function, params.right, at)
    if isinstance(params, ast.List):
        return all(isinstance(e, ast.Name) and _not_parameters(analysis, function, e.id, at) for e in params.elts)
    return isinstance(params, ast.Name) and _not_parameters(analysis, function, params.id, at)


def _not_parameters(analysis: Analysis, function, name: str, at: ast.AST) -> bool:
    """`name` is bound in the function and no statement that mentions it reads a module's
    parameters (`noises.append(p)` inside `for p in model.parameters():` does)."""
    if name in function.params or not analysis.roles_for(function).assignments.get(name):
        return False  # handed in or bound elsewhere: unknown
    for node in ast.walk(function.node):
        if isinstance(node, (ast.For, ast.AsyncFor)) and _mentions(node.iter, _PARAMETER_READS) \
                and any(_mentions(stmt, {name}) for stmt in node.body):
            return False
        if isinstance(node, ast.stmt) and not hasattr(node, "body") and _mentions(node, {name}) \
                and _mentions(node, _PARAMETER_READS):
            return False
    return True


# Attributes that read a module's parameters (`model.parameters()`, `layer.weight`).
_PARAMETER_READS = {"parameters", "named_parameters", "weight", "bias", "Parameter"}


def _mentions(tree: ast.AST, names: set[str]) -> bool:
    return any(isinstance(node, ast.Name) and node.id in names or isinstance(node, ast.Attribute) and node.attr in names
               for node in ast.walk(tree))


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


def _small_from_every_caller(analysis: Analysis, function, model: str, call: ast.Call) -> bool:
    """The model is a parameter of the training function, and every call of that function
    passes a model built (as seen there) with a known count of at most `TINY_MODEL` parameters:
    `nn.Linear(1, 1)` in one call, `nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1))`
    in the next (a book's `training_loop(model=...)` fitting a few points)."""
    if model not in function.params or function.is_module:
        return False
    sites = analysis.callers(function)
    if not sites:
        return False
    shapes = infer_shapes(analysis)
    for site in sites:
        passed = analysis.argument_for(site, function, model)
        if not isinstance(passed, ast.Name):
            return False
        built = _built_from(analysis, analysis.context(site).function, passed.id, site, hops=1)
        if not built or not all(_tiny_module(shapes.value_of(b)) for b in built):
            return False
    return True


def _tiny_model(analysis: Analysis, call: ast.Call) -> bool:
    """The called model is a torch layer or an instance of the file's module classes built
    from known arguments, whose parameter count is known and at most `TINY_MODEL`."""
    return _tiny_module(infer_shapes(analysis).value_of(call.func))


def _tiny_module(module) -> bool:
    if not (isinstance(module, Layer) or isinstance(module, Instance) and not module.standalone):
        return False  # anything else counts as no parameters: not a proof of a small model
    count = module_parameters(module)
    known = count.as_int() if count is not None else None
    return known is not None and 0 < known <= TINY_MODEL


def _one_linear_layer(analysis: Analysis, call: ast.Call) -> bool:
    """The called model is one `nn.Linear` of any size: bare, in a `Sequential`, or the only
    layer with parameters of an instance of the file's module classes (a logistic or softmax
    regression: `self.linear(x)` then a sigmoid). Each step is one matmul, which
    `torch.compile` leaves to the same library kernel: nothing to fuse, only warm-up."""
    return _one_linear_module(infer_shapes(analysis).value_of(call.func))


def _one_linear_module(module) -> bool:
    if isinstance(module, Instance):
        if module.standalone or module.parameters or unknown_submodule(module) is not None:
            return False  # its own `nn.Parameter`s, or a submodule nothing is known of
        layers = [value for value in module.attrs.values() if isinstance(value, (Layer, Instance, ListValue, DictValue))]
    elif isinstance(module, Layer):
        layers = list(module.children) if module.kind.name == "Sequential" else [module]
    else:
        return False
    weighted = [layer for layer in layers if not _parameter_free(layer)]
    return len(weighted) == 1 and isinstance(weighted[0], Layer) and weighted[0].kind.name == "Linear"


def _parameter_free(module) -> bool:
    """`nn.ReLU()`, `nn.Dropout(0.2)`, `nn.Sigmoid()`: a layer known to hold no parameters."""
    count = module_parameters(module)
    return count is not None and count.as_int() == 0


_RECURRENT_LAYERS = {"torch.nn.LSTM", "torch.nn.GRU", "torch.nn.RNN"}


def _runs_recurrent_layers(analysis: Analysis, function, model: str, at: ast.AST) -> bool:
    """The model is built from `nn.LSTM`/`nn.GRU`/`nn.RNN`: by a class (of this file or a
    project file it imports, through the classes it builds) or a factory function that
    makes one (`model = load_model(hparams)`), by the construction that reaches `at` or by
    any other binding of the name in the function, or from such modules
    (`Seq2Seq(encoder, decoder)` with `encoder = Encoder(...)`)."""
    for value in _bindings(analysis, function, model, at, hops=3):
        parts = [value] + [part for a in value.args if isinstance(a, ast.Name)
                           for part in _built_from(analysis, analysis.context(value).function, a.id, value, hops=2)]
        if any(_builds_recurrent_layer(analysis, part) for part in parts):
            return True
    return False


def _bindings(analysis: Analysis, function, name: str, at: ast.AST, hops: int) -> list[ast.Call]:
    """The calls `name` was built by as seen at `at`, and those of its other bindings in the
    function (`model = load_model()`, then in a branch `model = apply_gradient_allreduce(model)`)."""
    return _built_from(analysis, function, name, at, hops) + [
        a.value for a in analysis.roles_for(function).assignments.get(name, ())
        if not a.unpacked and isinstance(a.value, ast.Call)]


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
    built = unmoved(construction_of(analysis, function, name, at, unwrap=tuple(MODEL_WRAPPERS)))
    if isinstance(built, ast.Name):
        return _built_from(analysis, analysis.context(built).function, built.id, built, hops - 1)
    return [built] if isinstance(built, ast.Call) else []


# Classes and factory functions followed from the model's construction to its layers.
_DEFINITION_DEPTH = 3


def _builds_recurrent_layer(analysis: Analysis, value: ast.AST | None, depth: int = 0) -> bool:
    """`nn.LSTM(...)`, or a call of a class or function of the project that builds one:
    anywhere in the class (its constructor builds its layers), or in what the function
    returns; for a class picked from a dict of classes, every class the dict offers."""
    value = unmoved(value)
    if not isinstance(value, ast.Call):
        return False
    if analysis.call_qualname(value) in _RECURRENT_LAYERS:
        return True
    if depth >= _DEFINITION_DEPTH:
        return False
    picked = _picked_from_table(analysis, value.func)
    if picked:
        return all(_definition_builds_recurrent(analysis, func, depth) for func in picked)
    return _definition_builds_recurrent(analysis, value.func, depth)


def _picked_from_table(analysis: Analysis, func: ast.AST) -> list[ast.Name]:
    """`variants[args.model](...)` with `variants = {'GeniePath': GeniePath, ...}`: every class
    the dict offers (empty when `func` is no such pick)."""
    if not (isinstance(func, ast.Subscript) and isinstance(func.value, ast.Name)):
        return []
    assignment = reaching_assignment(analysis, func.value)
    table = assignment.value if assignment is not None else None
    if not isinstance(table, ast.Dict) or not all(isinstance(v, ast.Name) for v in table.values):
        return []
    return list(table.values)


def _definition_builds_recurrent(analysis: Analysis, func: ast.AST, depth: int) -> bool:
    """The project class or function `func` names builds a recurrent layer."""
    found = project_definition(analysis, func)
    if found is None:
        return False
    where, definition = found
    if isinstance(definition, ast.ClassDef):
        return any(_builds_recurrent_layer(where, call, depth + 1)
                   for call in ast.walk(definition) if isinstance(call, ast.Call))
    return any(_builds_recurrent_layer(where, returned, depth + 1)
               for function in where.function_named(definition.name) if function.node is definition
               for returned in _returned_values(where, function))


def _returned_values(analysis: Analysis, function) -> list[ast.AST]:
    """What the function returns, a returned name followed to its construction."""
    values = []
    for stmt in function.statements:
        if isinstance(stmt, ast.Return) and stmt.value is not None:
            if isinstance(stmt.value, ast.Name):
                values += _bindings(analysis, function, stmt.value.id, stmt, hops=2)
            else:
                values.append(stmt.value)
    return values


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

"""TL1xx — correctness of the training loop."""
from __future__ import annotations

import ast
from typing import Iterator

from server.analysis import (
    Analysis,
    FunctionInfo,
    LoopInfo,
    eval_switch_before,
    evaluation_model_calls,
    in_eval_mode,
    name_says_evaluation,
    switches_to_eval,
)
from server.diagnostics import register
from server.diagnostics.base import Finding, Rule
from server.roles import class_attribute_roles, is_config_number, local_module_classes
from server.syntax_nodes import call_name, dotted, has_star_args, keyword, loop_header_span, method_span, receiver

def _clears_gradients(analysis: Analysis, loop: LoopInfo) -> bool:
    """`zero_grad(...)`, `p.grad = None`, `p.grad.zero_()` in the loop or in a local helper it calls."""
    if _calls_clear(loop.calls) or _assigns_grad_none(loop.statements):
        return True
    for call in loop.calls:
        name = call_name(call)
        for function in analysis.function_named(name or ""):
            if _calls_clear(function.calls) or _assigns_grad_none(function.statements):
                return True
    return False


def _calls_clear(calls: list[ast.Call]) -> bool:
    for call in calls:
        name = call_name(call)
        if name == "zero_grad":
            return True
        if name in ("zero_", "fill_", "detach_", "requires_grad_") and isinstance(call.func, ast.Attribute):
            target = call.func.value
            if isinstance(target, ast.Attribute) and target.attr == "data":
                target = target.value
            if isinstance(target, ast.Attribute) and target.attr == "grad" and name in ("zero_", "fill_"):
                return True
    return False


def _assigns_grad_none(statements: list[ast.stmt]) -> bool:
    for stmt in statements:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant) and stmt.value.value is None:
            if any(isinstance(t, ast.Attribute) and t.attr == "grad" for t in stmt.targets):
                return True
    return False


@register
class MissingZeroGrad(Rule):
    """
    ## What it does
    Flags a training loop that calls `.backward()` and `optimizer.step()` but never clears
    the gradients.

    ## Why is this bad
    `.backward()` adds into `.grad`. Without `zero_grad()` every step uses the sum of all
    gradients so far, so updates grow and training diverges or silently degrades.
    Clearing is `optimizer.zero_grad()`, `model.zero_grad()`, `p.grad = None` or
    `p.grad.zero_()` (the manual forms may get TL407).

    ## Example
    ```python
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    ```

    ## Use instead
    ```python
    for x, y in loader:
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    ```
    """

    code = "TL101"
    name = "missing-zero-grad"
    severity = "warning"
    fix_safety = "safe"

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        for loop in analysis.innermost_training_loops:
            backward = analysis.backward_calls(loop)
            steps = analysis.optimizer_steps(loop)
            if not backward or not steps or _clears_gradients(analysis, loop):
                continue
            optimizer = _optimizer_expr(steps[0])
            message = (
                f"This training loop calls `{ast.unparse(backward[0].func)}()` and `{ast.unparse(steps[0])}` "
                f"but never clears gradients, so they accumulate across steps. "
                f"Call `{optimizer}.zero_grad(set_to_none=True)` at the start of each iteration."
            )
            yield self.finding_at(
                loop_header_span(loop.node), message,
                f"Insert `{optimizer}.zero_grad(set_to_none=True)` at the top of the loop",
                data={"optimizer": optimizer},
            )


def _optimizer_expr(step: ast.Call) -> str:
    """`optimizer` for `optimizer.step()`, and for `scaler.step(optimizer)`."""
    target = receiver(step)
    if step.args and call_name(step) == "step" and target is not None:
        name = dotted(target) or ""
        if name.split(".")[-1].lower().endswith("scaler"):
            return ast.unparse(step.args[0])
    return ast.unparse(target) if target is not None else "optimizer"


@register
class MissingTrainMode(Rule):
    """
    ## What it does
    Flags a training loop that runs a model which is switched to eval mode elsewhere in the
    file (say, by a `validate()` run every epoch) while nothing switches it back with
    `model.train()` on the training path.

    ## Why is this bad
    After the first validation the model stays in eval mode: dropout is off and batch-norm
    uses (and stops updating) its running statistics, so the rest of training silently
    trains a different network.

    ## Example
    ```python
    def validate(model, loader):
        model.eval()
        ...

    def train_epoch(model, loader, optimizer):
        for x, y in loader:
            ...
    ```

    ## Use instead
    ```python
    def train_epoch(model, loader, optimizer):
        model.train()
        for x, y in loader:
            ...
    ```
    """

    code = "TL102"
    name = "missing-train-mode"
    severity = "warning"
    fix_safety = "safe"

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        for loop in analysis.innermost_training_loops:
            if not (analysis.backward_calls(loop) or analysis.optimizer_steps(loop)):
                continue
            reported = False
            roles = analysis.roles_for(loop.function)
            for call in loop.calls:
                model = roles.model_name(call)
                if reported or model is None or analysis.context(call).grad_disabled:
                    continue
                evaluation = self._eval_before_training(analysis, loop, model)
                if evaluation is None:
                    continue
                where, inside_epoch = evaluation
                if self._train_on_path(analysis, loop, model, inside_epoch):
                    continue
                message = (
                    f"`{model}` is put in eval mode {where}, but nothing calls `{model}.train()` before this "
                    f"training loop, so dropout and batch-norm stay in eval mode after the first evaluation. "
                    f"Call `{model}.train()` before the loop."
                )
                reported = True
                yield self.finding_at(
                    loop_header_span(loop.node), message, f"Insert `{model}.train()` before the loop",
                    data={"model": model, "inside_epoch": inside_epoch},
                )

    def _eval_before_training(self, analysis: Analysis, loop: LoopInfo, model: str):
        """Where `model` can be switched to eval before the loop runs again, or None."""
        # An enclosing (epoch) loop evaluates the model between training passes.
        ancestor = loop.parent
        while ancestor is not None:
            for call in ancestor.calls:
                if switches_to_eval(analysis, call, model):
                    return f"by `{ast.unparse(call.func)}()` (line {call.lineno}) inside the enclosing loop", True
            ancestor = ancestor.parent
        function = loop.function
        if function.is_module or analysis.switched(function, model, "eval"):
            return None  # eval in the same function before training: deliberate (frozen BN) or not ours
        if model not in function.params:
            return None  # built here, so it starts in train mode
        # A per-epoch training function: validated elsewhere between calls.
        callers = analysis.callers(function)
        if callers and not any(analysis.context(c).loops for c in callers):
            return None
        for other, switches in analysis.mode_switches.items():
            if other is function:
                continue
            for switch in switches:
                if switch.name == model and switch.mode == "eval":
                    owner = "module level" if other.is_module else f"`{other.name}()`"
                    return f"in {owner} (line {switch.call.lineno})", False
        return None

    def _train_on_path(self, analysis: Analysis, loop: LoopInfo, model: str, inside_epoch: bool) -> bool:
        """`model.train()` runs again after each evaluation, before the loop trains."""
        function = loop.function
        if inside_epoch:
            # Evaluated inside an enclosing loop: a `train()` before that loop runs only once.
            outer = loop.parent
            while outer is not None:
                if any(_switches_to_train(c, model) for c in outer.calls):
                    return True
                outer = outer.parent
            return False
        if analysis.switched(function, model, "train"):
            return True
        for caller in analysis.callers(function):
            owner = analysis.context(caller).function
            if any(s.mode == "train" for s in analysis.mode_switches.get(owner, ())):
                return True
        return False


def _switches_to_train(call: ast.Call, model: str) -> bool:
    func = call.func
    return (
        isinstance(func, ast.Attribute) and func.attr == "train" and isinstance(func.value, ast.Name)
        and func.value.id == model and not (call.args and isinstance(call.args[0], ast.Constant) and call.args[0].value is False)
    )


@register
class MissingEvalMode(Rule):
    """
    ## What it does
    Flags a model run in an evaluation context — under `torch.no_grad()` /
    `torch.inference_mode()`, or in a `validate`/`evaluate`/`test`/`predict` function that
    receives the model — when nothing puts that model in eval mode with `model.eval()`.
    Layers visited one by one through `model.named_children()` or `model.modules()` (weight
    conversion, calibration) are not evaluations; names that start with a verb
    (`run_model`, `load_model`) are callbacks, not models.

    ## Why is this bad
    In train mode dropout still drops activations and batch-norm normalises with the
    statistics of the current batch (and updates its running averages), so metrics are
    noisy, wrong for small batches, and evaluation changes the model.

    ## Example
    ```python
    @torch.no_grad()
    def predict(model, images):
        return model(images).argmax(dim=-1)
    ```

    ## Use instead
    ```python
    @torch.no_grad()
    def predict(model, images):
        model.eval()
        return model(images).argmax(dim=-1)
    ```
    """

    code = "TL103"
    name = "missing-eval-mode"
    severity = "warning"
    fix_safety = "safe"

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        for function, call, model in evaluation_model_calls(analysis):
            evaluation = (
                analysis.context(call).grad_disabled
                or name_says_evaluation(analysis, function, model)
                or eval_switch_before(analysis, function, call) not in (None, model)
            )
            if not evaluation or in_eval_mode(analysis, function, call, model):
                continue
            message = (
                f"`{model}` runs in an evaluation context but is never put in eval mode, so dropout and "
                f"batch-norm behave as in training. Call `{model}.eval()` first."
            )
            yield self.finding(call, message, f"Insert `{model}.eval()` before evaluating", data={"model": model})


@register
class InplaceOnLeaf(Rule):
    """
    ## What it does
    Flags an in-place change (`+=`, `x[...] = ...`, any `*_` method such as `clamp_`) of a
    tensor that requires grad — a tensor made with `requires_grad=True` or
    `.requires_grad_()`, an `nn.Parameter`, or a model's parameter — outside
    `torch.no_grad()`.

    ## Why is this bad
    Autograd refuses: "a leaf Variable that requires grad is being used in an in-place
    operation". Manual parameter updates and clamps must not be recorded in the graph.

    ## Example
    ```python
    w = torch.zeros(d, requires_grad=True)
    ...
    w -= lr * w.grad
    ```

    ## Use instead
    ```python
    with torch.no_grad():
        w -= lr * w.grad
    ```
    """

    code = "TL104"
    name = "inplace-on-leaf"
    severity = "error"
    fix_safety = "safe"

    _NOT_MUTATIONS = {"requires_grad_", "retain_grad", "share_memory_", "register_hook"}
    # Weight surgery (`layer.weight.copy_(w)`) lives in conversion helpers that callers run
    # under `no_grad` in another file; only arithmetic updates of model parameters are sure.
    _INIT_STYLE = {"copy_", "fill_", "zero_", "uniform_", "normal_", "data_", "set_", "resize_"}

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        for function in analysis.functions:
            if function.no_grad_decorated or analysis.only_called_without_grad(function):
                continue
            for stmt in function.statements:
                if analysis.context(stmt).grad_disabled:
                    continue
                yield from self._statement(analysis, function, stmt)

    def _statement(self, analysis: Analysis, function: FunctionInfo, stmt: ast.stmt) -> Iterator[Finding]:
        targets: list[tuple[ast.AST, ast.AST]] = []  # (mutated tensor expr, reported node)
        if isinstance(stmt, ast.AugAssign):
            base = stmt.target.value if isinstance(stmt.target, ast.Subscript) else stmt.target
            targets.append((base, stmt))
        elif isinstance(stmt, ast.Assign):
            targets += [(t.value, stmt) for t in stmt.targets if isinstance(t, ast.Subscript)]
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            call = stmt.value
            name = call_name(call)
            if name and name.endswith("_") and not name.endswith("__") and name not in self._NOT_MUTATIONS:
                if isinstance(call.func, ast.Attribute):
                    targets.append((call.func.value, call))
        for tensor, node in targets:
            why = self._requires_grad(analysis, function, tensor, stmt)
            if why == "is a model parameter" and isinstance(node, ast.Call) and call_name(node) in self._INIT_STYLE:
                continue
            if why:
                text = ast.unparse(tensor)
                message = (
                    f"`{text}` {why}, and this changes it in place outside `torch.no_grad()`: autograd raises "
                    f"\"a leaf Variable that requires grad is being used in an in-place operation\". "
                    f"Wrap the update in `with torch.no_grad():`."
                )
                yield self.finding(node, message, "Wrap the statement in `with torch.no_grad():`")

    def _requires_grad(self, analysis: Analysis, function: FunctionInfo, tensor: ast.AST, stmt: ast.stmt) -> str | None:
        roles = analysis.roles_for(function)
        if isinstance(tensor, ast.Name):
            assignment = roles.last_assignment(tensor.id, stmt)
            if assignment is not None and not assignment.unpacked and _makes_leaf(analysis, assignment.value):
                return "requires grad"
            return None
        if isinstance(tensor, ast.Attribute):
            chain = dotted(tensor)
            if chain is None:
                return None
            root, *rest = chain.split(".")
            if root == "self" and len(rest) == 1 and function.class_node is not None:
                if rest[0] in class_attribute_roles(analysis, function.class_node)["parameter"]:
                    return "is an `nn.Parameter`"
                return None
            if rest and rest[-1] in ("weight", "bias") and "data" not in rest and "grad" not in rest:
                if root == "self" and function.class_node is not None and function.class_node.name in local_module_classes(analysis):
                    if len(rest) >= 2 and rest[0] in class_attribute_roles(analysis, function.class_node)["model"]:
                        return "is a model parameter"
                elif root != "self" and roles.is_model(root):
                    return "is a model parameter"
        return None


def _makes_leaf(analysis: Analysis, value: ast.AST | None) -> bool:
    if not isinstance(value, ast.Call):
        return False
    if analysis.call_qualname(value) in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
        return True
    if call_name(value) == "requires_grad_":
        args = value.args or [kw.value for kw in value.keywords]
        return not args or (isinstance(args[0], ast.Constant) and args[0].value is True)
    kw = keyword(value, "requires_grad")
    qualname = analysis.call_qualname(value) or ""
    return (
        kw is not None and isinstance(kw.value, ast.Constant) and kw.value.value is True and qualname.startswith("torch.")
    )


@register
class HardcodedDevice(Rule):
    """
    ## What it does
    Flags `.cuda()`, `.to("cuda")` and `device="cuda"` in a file that also defines a device
    variable (`device = torch.device(...)`).

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
        device = _defined_device_variable(analysis)
        if device is None:
            return
        for call in analysis.calls:
            if analysis.call_qualname(call) == "torch.device":
                continue
            name = call_name(call)
            if name == "cuda" and isinstance(call.func, ast.Attribute) and analysis.qualname(call.func) is None:
                if _hardcoded_cuda_call(call):
                    yield self._report(method_span(call), f"`.{ast.unparse(call)[len(ast.unparse(call.func.value)) + 1:]}`", device, "cuda")
            elif name == "to" and isinstance(call.func, ast.Attribute):
                target = call.args[0] if call.args else getattr(keyword(call, "device"), "value", None)
                if _is_cuda_string(target):
                    yield self._report(method_span(call), f"`.to({ast.unparse(target)})`", device, "to")
            else:
                kw = keyword(call, "device")
                if kw is not None and _is_cuda_string(kw.value):
                    span = (kw.lineno, kw.col_offset, kw.end_lineno, kw.end_col_offset)
                    yield self._report(span, f"`device={ast.unparse(kw.value)}`", device, "keyword")

    def _report(self, span, what: str, device: str, form: str) -> Finding:
        message = (
            f"{what} hardcodes the GPU although this file defines `{device}`; on a CPU-only machine or another "
            f"GPU the tensors end up on different devices. Use `{device}` instead."
        )
        return self.finding_at(span, message, f"Use `{device}`", data={"device": device, "form": form})


def _hardcoded_cuda_call(call: ast.Call) -> bool:
    """`.cuda()` / `.cuda(0)` on a value — not `super().cuda(device)` in an override."""
    target = call.func.value
    if isinstance(target, ast.Call) and isinstance(target.func, ast.Name) and target.func.id == "super":
        return False
    if call.keywords and any(kw.arg in ("device", None) for kw in call.keywords):
        return False
    return all(isinstance(a, ast.Constant) and isinstance(a.value, int) for a in call.args)


def _is_cuda_string(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.split(":")[0] == "cuda"


def _defined_device_variable(analysis: Analysis) -> str | None:
    """The name of a device variable the file defines (`device = torch.device(...)` or similar)."""
    from server.roles import DEVICE_NAME, constructed_kind

    for stmt in analysis.statements:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name, value = stmt.targets[0].id, stmt.value
            if constructed_kind(analysis, value) == "device":
                return name
            if DEVICE_NAME.match(name) and isinstance(value, ast.IfExp):
                return name
    return None


_FACTORIES = {
    "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange", "eye", "linspace",
    "logspace", "tensor",
}


@register
class FactoryWithoutDevice(Rule):
    """
    ## What it does
    Flags a tensor factory (`torch.zeros`, `torch.arange`, `torch.eye`, `torch.tensor([...])`,
    …) called without `device=` inside an `nn.Module.forward` that receives tensors.
    A 0-d tensor (`torch.rand([])`, `torch.tensor(2.0)`) is not flagged: PyTorch moves a
    0-d CPU tensor to the GPU by itself. Neither is a tensor that only becomes a Python
    number (`torch.rand(1).item()`), a one-element draw compared only to decide a branch
    (`if torch.rand(1) < p:`), nor a mask compared only with plain numbers and used as an
    index (`x[:, torch.rand(n) < self.config.keep]`).

    ## Why is this bad
    The new tensor is created on the CPU while the module's inputs live on the GPU, so the
    first operation mixing them fails ("Expected all tensors to be on the same device"), or
    a silent host-to-device copy happens every forward pass.

    ## Example
    ```python
    def forward(self, x):
        positions = torch.arange(x.size(1))
        return x + self.pos_emb(positions)
    ```

    ## Use instead
    ```python
    def forward(self, x):
        positions = torch.arange(x.size(1), device=x.device)
        return x + self.pos_emb(positions)
    ```
    """

    code = "TL106"
    name = "factory-without-device"
    severity = "warning"
    fix_safety = "safe"

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        module_classes = set(local_module_classes(analysis).values())
        for function in analysis.functions:
            if function.name != "forward" or function.class_node not in module_classes:
                continue
            inputs = [p for p in function.params[1:] if p not in ("args", "kwargs")]
            if not inputs:
                continue
            for call in function.calls:
                qualname = analysis.call_qualname(call) or ""
                if not qualname.startswith("torch.") or qualname.count(".") != 1:
                    continue
                factory = qualname.split(".")[1]
                if factory not in _FACTORIES or has_star_args(call):
                    continue
                if keyword(call, "device") or keyword(call, "out"):
                    continue
                if factory == "tensor" and not (call.args and isinstance(call.args[0], (ast.List, ast.Tuple))):
                    continue  # 0-d CPU tensors mix fine with GPU tensors
                if _zero_dim_factory(factory, call):
                    continue  # `torch.rand([])`: the same, a 0-d CPU tensor mixes with GPU tensors
                if self._moved_right_away(analysis, call) or not _meets_other_values(analysis, function, call):
                    continue
                if _single_element(factory, call) and _only_a_truth_test(analysis, call):
                    continue  # `if torch.rand(1) < p:` draws a coin; what it is compared with is unknown
                if _single_element(factory, call) and _indexed_to_zero_dim(analysis, call):
                    continue  # `torch.randint(0, n, (1,))[0]` is 0-d
                message = (
                    f"`{qualname.replace('torch.', 'torch.', 1)}(...)` inside `forward` creates a CPU tensor while "
                    f"the inputs may be on the GPU. Pass `device={inputs[0]}.device`."
                )
                yield self.finding(call, message, f"Add `device={inputs[0]}.device`", data={"input": inputs[0]})

    def _moved_right_away(self, analysis: Analysis, call: ast.Call) -> bool:
        parent = analysis.parents.get(call)
        if isinstance(parent, ast.Attribute) and parent.attr in ("to", "cuda", "type_as", "to_device"):
            return True
        if isinstance(parent, ast.Attribute) and parent.attr == "type":  # `.type(other.type())`: its device too
            holder = analysis.parents.get(parent)
            if isinstance(holder, ast.Call) and holder.func is parent and len(holder.args) == 1:
                argument = holder.args[0]
                if isinstance(argument, ast.Call) and call_name(argument) == "type" and not argument.args:
                    return True
        if isinstance(parent, ast.Call) and call_name(parent) in ("register_buffer", "Parameter", "to"):
            return True
        return False


def _meets_other_values(analysis: Analysis, function: FunctionInfo, call: ast.Call) -> bool:
    """The new tensor is used in arithmetic, or compared with something that may be a
    tensor (directly, or through the name it is bound to).

    A CPU tensor used only as an index (`x[:, torch.randperm(n)]`), turned into a Python
    number (`.item()`), or only compared with plain numbers (`torch.rand(n) < self.p`)
    never meets GPU data, so it is not what TL106 is about.
    """
    verdict, parent = _climb(analysis, function, call)
    if verdict is not None:
        return verdict
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
        name = parent.targets[0].id
        for use in ast.walk(function.node):
            if isinstance(use, ast.Name) and use.id == name and isinstance(use.ctx, ast.Load) and use.lineno > parent.lineno:
                holder = analysis.parents.get(use)
                if isinstance(holder, (ast.BinOp, ast.AugAssign)):
                    return True
                if isinstance(holder, ast.Compare):
                    if not _compared_to_numbers(analysis, function, holder, use):
                        return True
                    if _climb(analysis, function, holder)[0]:  # `mask == 0` is still a CPU tensor: where does it go?
                        return True
                if isinstance(holder, ast.Call) and use is not holder.func and _combines_tensors(analysis, holder):
                    return True
    return False


def _climb(analysis: Analysis, function: FunctionInfo, start: ast.AST) -> tuple[bool | None, ast.AST | None]:
    """Follow the new tensor up through its methods, indexing and comparisons with plain
    numbers: True once it meets other values (arithmetic, a comparison, a call that combines
    tensors), False once it becomes a Python number, else None with where it stopped."""
    node = start
    while True:
        parent = analysis.parents.get(node)
        if isinstance(parent, ast.BinOp):
            return True, parent
        if isinstance(parent, ast.Compare):
            if not _compared_to_numbers(analysis, function, parent, node):
                return True, parent
        elif isinstance(parent, ast.Attribute):
            holder = analysis.parents.get(parent)
            if parent.attr in ("item", "tolist") and isinstance(holder, ast.Call) and holder.func is parent:
                return False, parent
        elif isinstance(parent, ast.Call) and parent.func is not node:
            if isinstance(parent.func, ast.Name) and parent.func.id in ("int", "float", "bool") and node in parent.args:
                return False, parent
            return (True if _combines_tensors(analysis, parent) else None), parent
        elif not (isinstance(parent, ast.Call) or (isinstance(parent, ast.Subscript) and parent.value is node)):
            return None, parent
        node = parent


def _compared_to_numbers(analysis: Analysis, function: FunctionInfo, compare: ast.Compare, node: ast.AST) -> bool:
    others = [e for e in (compare.left, *compare.comparators) if e is not node]
    return all(_plain_number(analysis, function, e) for e in others)


def _plain_number(analysis: Analysis, function: FunctionInfo, expr: ast.AST) -> bool:
    """A Python number for sure: a constant, a config value (`self.config.layerdrop`,
    `config.p`), or an attribute that the class only ever sets from those."""
    if isinstance(expr, ast.UnaryOp):
        return _plain_number(analysis, function, expr.operand)
    if isinstance(expr, ast.BinOp):
        return _plain_number(analysis, function, expr.left) and _plain_number(analysis, function, expr.right)
    chain = dotted(expr)
    if chain is not None and chain.startswith("self."):
        parts = chain.split(".")
        if len(parts) == 2 and function.class_node is not None:
            return parts[1] in class_attribute_roles(analysis, function.class_node)["number"]
        return "config" in parts[1].lower()
    return is_config_number(expr)


_SIZED_FACTORIES = {"zeros", "ones", "empty", "full", "rand", "randn"}  # size first (`full` then its fill value)


def _size_argument(factory: str, call: ast.Call) -> list[ast.AST] | None:
    """The size a sized factory is given, as a list of dim expressions; None when unsure."""
    if factory not in _SIZED_FACTORIES and factory != "randint":
        return None
    size = keyword(call, "size")
    if size is not None:
        shape = size.value
    elif factory == "randint":  # `randint(high, size)` or `randint(low, high, size)`
        if len(call.args) not in (2, 3):
            return None
        shape = call.args[-1]
    elif factory == "full":
        if len(call.args) != 2:
            return None
        shape = call.args[0]
    elif len(call.args) == 1 and isinstance(call.args[0], (ast.List, ast.Tuple)):
        shape = call.args[0]
    else:
        return list(call.args) if call.args else None
    return list(shape.elts) if isinstance(shape, (ast.List, ast.Tuple)) else None


def _zero_dim_factory(factory: str, call: ast.Call) -> bool:
    """`torch.rand([])`, `torch.zeros(())`, `torch.full((), v)`: a 0-d tensor."""
    return _size_argument(factory, call) == []


def _single_element(factory: str, call: ast.Call) -> bool:
    """`torch.rand(1)`, `torch.rand([1])`, or a 0-d factory."""
    size = _size_argument(factory, call)
    return size is not None and all(isinstance(d, ast.Constant) and d.value == 1 for d in size)


def _indexed_to_zero_dim(analysis: Analysis, call: ast.Call) -> bool:
    parent = analysis.parents.get(call)
    return isinstance(parent, ast.Subscript) and parent.value is call and isinstance(parent.slice, ast.Constant) \
        and isinstance(parent.slice.value, int)


def _only_a_truth_test(analysis: Analysis, call: ast.Call) -> bool:
    """The call sits directly in a comparison whose result only decides a branch
    (`if torch.rand(1) < p:`, `skip = self.training and torch.rand(1) > p`)."""
    compare = analysis.parents.get(call)
    if not isinstance(compare, ast.Compare):
        return False
    condition, holder = compare, analysis.parents.get(compare)
    while isinstance(holder, ast.BoolOp) or (isinstance(holder, ast.UnaryOp) and isinstance(holder.op, ast.Not)):
        condition, holder = holder, analysis.parents.get(holder)
    return isinstance(holder, (ast.If, ast.While, ast.IfExp, ast.Assert)) and holder.test is condition


_COMBINING = {"cat", "stack", "where", "matmul", "bmm", "mm", "einsum", "add", "mul", "masked_fill", "gather"}


def _combines_tensors(analysis: Analysis, call: ast.Call) -> bool:
    """A submodule call (`self.emb(ids)`) or a torch op that mixes its tensor arguments."""
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
        return True
    qualname = analysis.call_qualname(call)
    if qualname is None:  # a tensor method: `scores.masked_fill(mask == 0, ...)` meets `scores`
        return isinstance(func, ast.Attribute) and func.attr in _COMBINING
    return qualname.startswith("torch.") and qualname.rsplit(".", 1)[-1] in _COMBINING


@register
class BackwardUnderNoGrad(Rule):
    """
    ## What it does
    Flags `.backward()` called inside `torch.no_grad()` or `torch.inference_mode()`
    (including a function decorated with them), unless `torch.enable_grad()` re-enables
    autograd around it.

    ## Why is this bad
    Nothing computed under `no_grad` is recorded in the graph, so the call fails with
    "element 0 of tensors does not require grad and does not have a grad_fn".

    ## Example
    ```python
    with torch.no_grad():
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
    ```

    ## Use instead
    ```python
    loss = F.cross_entropy(model(images), labels)
    loss.backward()
    ```
    """

    code = "TL107"
    name = "backward-under-no-grad"
    severity = "error"
    fix_safety = "none"

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        for call in analysis.backward_call_list():
            if not analysis.context(call).grad_disabled:
                continue
            if not self._computed_without_grad(analysis, call):
                continue
            message = (
                f"`{ast.unparse(call)}` runs on a value computed with autograd disabled "
                f"(`torch.no_grad()`/`inference_mode()`), so there is no graph to backpropagate through and it "
                f"raises. Compute the loss outside the no-grad block (or inside `torch.enable_grad()`)."
            )
            yield self.finding(call, message)

    def _computed_without_grad(self, analysis: Analysis, call: ast.Call) -> bool:
        """The tensor being backpropagated was itself computed with autograd off.

        `loss.backward()` inside `no_grad` works when `loss` was computed before the block;
        it fails when the loss (or the expression on it) is computed under `no_grad`.
        """
        target = receiver(call)
        if call_name(call) == "manual_backward" or target is None:
            target = call.args[0] if call.args else None
        if isinstance(target, ast.Name):
            assignment = analysis.roles_for(call).last_assignment(target.id, call)
            return assignment is not None and analysis.context(assignment.statement).grad_disabled
        return isinstance(target, (ast.Call, ast.BinOp, ast.Subscript))


@register
class SchedulerBeforeOptimizer(Rule):
    """
    ## What it does
    Flags `scheduler.step()` that, within one loop body, comes before the first
    `optimizer.step()`.

    ## Why is this bad
    Since PyTorch 1.1 the scheduler must step after the optimizer; stepping it first skips
    the first value of the schedule (warm-up starts one step late, cosine ends early), and
    PyTorch warns about it at run time.

    ## Example
    ```python
    for x, y in loader:
        loss.backward()
        scheduler.step()
        optimizer.step()
    ```

    ## Use instead
    ```python
    for x, y in loader:
        loss.backward()
        optimizer.step()
        scheduler.step()
    ```
    """

    code = "TL108"
    name = "scheduler-before-optimizer"
    severity = "warning"
    fix_safety = "safe"

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        reported: set[int] = set()
        for loop in analysis.loops:
            roles = analysis.roles_for(loop.function)
            steps = [c for c in loop.calls if roles.is_optimizer_step(c)]
            if not steps:
                continue
            first_step = min(steps, key=lambda c: (c.lineno, c.col_offset))
            for call in loop.calls:
                if id(call) in reported or call.args or call.keywords or not roles.is_scheduler_step(call):
                    continue
                if (call.lineno, call.col_offset) < (first_step.lineno, first_step.col_offset):
                    reported.add(id(call))
                    message = (
                        f"`{ast.unparse(call)}` runs before `{ast.unparse(first_step)}` in this loop, so the first "
                        f"learning-rate value of the schedule is skipped. Step the scheduler after the optimizer."
                    )
                    yield self.finding(
                        call, message, f"Move `{ast.unparse(call)}` after `{ast.unparse(first_step)}`",
                        data={"optimizer_step_line": first_step.lineno},
                    )

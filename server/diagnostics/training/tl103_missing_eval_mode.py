"""TL103 missing-eval-mode: flags a model run in an evaluation context — under `torch.no_grad()` /
`torch.inference_mode()`, or in a `validate`/`evaluate`/`test`/`predict` function that receives
the model — when nothing puts that model in eval mode with `model.eval()`.
"""
from __future__ import annotations

import ast
from typing import Iterator

from torch_lsp.analysis import (
    IDENTIFIER_WORDS, Analysis, arrives_in_eval_mode, attribute_loaded_in_eval_mode, construction_of, eval_switch_before,
    evaluation_model_calls, in_eval_mode, last_switch_before, name_says_evaluation, named_for_evaluation,
    self_model_switched, trainer_model_calls,
)
from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import FixInfo, Finding, Related, Rule
from torch_lsp.mode_behaviour import attribute_is_mode_independent, named_model_is_mode_independent
from torch_lsp.roles import MODEL_WRAPPERS, constructed_kind
from torch_lsp.syntax_nodes import call_name, is_self_attribute, is_self_attribute_named, mentions_any


@register
class MissingEvalMode(Rule):
    """
    ## What it does
    Flags a model run in an evaluation context — under `torch.no_grad()` /
    `torch.inference_mode()`, or in a `validate`/`evaluate`/`test`/`predict` function that
    receives the model — when nothing puts that model in eval mode with `model.eval()`.
    Layers visited one by one through `model.named_children()` or `model.modules()` (weight
    conversion, calibration) are not evaluations; names that start with a verb (`run_model`,
    `load_model`) are callbacks, not models. Not flagged either: a model built from a class
    of the project whose layers have no train/eval behaviour (no dropout, no batch norm,
    checked through its submodule classes, also in imported workspace files, the blocks it
    runs one by one from its own `ModuleList`, and a base such as `torch.jit.ScriptModule`
    named through an alias: `eval()` changes nothing; nor a function never called in the
    file but handed to a call as a callback, whose caller sets the mode; nor when its only dropout layers take a rate the construction passes as
    0, `CausalAttention(d_in, d_out, context_length, 0.0)`; Opacus' `DPLSTM`/`DPGRU`/`DPRNN`
    count as their `nn` twins, and the model Opacus' `make_private` hands back runs the
    `module=` it was given), built in place from such torch
    layers (`probe = nn.Linear(d, k)`), or handed back by a factory of the project that builds
    such a model (`psnr, ssim = build_iqa_model(device)`: image-quality metrics of fixed
    arithmetic; also a parameter every caller fills that way, through callers that hand it on,
    `net = get_net(n)` then `train(net, ...)` scoring it with `log_rmse(net, ...)`),
    a model loaded with `from_pretrained()` (which returns it in eval mode), a "model" fed
    NumPy arrays (`isp_model.forward(img.copy(), hq)`: no torch module), a "model" that is a
    plain function of the file (`def net(X): return softmax(X @ W + b)`, handed in by every
    caller, also by the calls of a pick from a table of functions, `sample_fn = {"heun":
    sample_heun}[name]` then `sample_fn(denoise, x)`: a from-scratch model or a denoising
    closure has no mode to switch), and a function
    under `no_grad` (not named for evaluation) whose result every caller hands to a function
    of the file that trains (`bank = init_memory(loader, model)`, then `train(..., bank)`):
    it computes what the training consumes, in the training's mode on purpose; so does a run
    under `no_grad` in a loop whose result feeds a training step that a helper of the file runs
    later in the same loop (PPO's `data = adv_module(data)`, then `buffer.extend(data)` and
    `for mb in buffer: update(mb)`, `update` backpropagating). A parameter
    named like a class (`Generator`) is the class handed in: calling it builds a model. A
    model passed by callers that all ran a function of the file leaving it in eval mode
    first (`evaluate(loader, model)` then `predict(text, model)`) counts as in eval mode (so
    does a closure's model that its enclosing function bound to a loader returning it in eval
    mode, `net = load_net()` before `def get_metrics(): ... accumulate(sample, net)`), and
    so does a model returned by a loader that calls `.eval()` on it (`model = load_model(path)`,
    a function of the file or imported from a project file; also one that gathers checkpoints
    each put in eval mode, `ensemble.append(ckpt["model"].float().eval())`, a wrapper built
    around such a model, or one element of the tuple it returns, `ours, hf_model =
    build_pair(cfg)` after `return ours, hf_model`), and a model that a function of
    the file called on it earlier in the same function left in eval mode (each epoch ends with
    `test(encoder, data)`, then a last pass under
    `no_grad`). A run whose output is discarded (`model(batch)` as a statement, or bound to a
    name nothing reads: a dry run that initialises lazy layers) evaluates nothing, unless the
    file registers forward hooks or a notebook cell displays the value.
    The fix is safe only on a model known to be an `nn.Module` (built in view) in a function
    that does not go on to train; otherwise it is offered as unsafe. Trainers written as
    classes are checked too: an `evaluate`-style method, or one under `no_grad`, running
    `self.model` when no method of the class switches that model's mode (not a Lightning hook,
    `validation_step(self, batch, batch_idx)` of a task mixin, before which Lightning's trainer
    switches the mode), unless the class
    builds that attribute only from layers without train/eval behaviour (a fixed blur of
    pads and convolutions; a rollout policy of `Linear` and `Tanh` layers, moved to the
    device where it is built: `self.policy = Policy().to(device)`) or only loads it in eval
    mode (`self.model, self.preprocess = clip.load(...)`, `self.model =
    AutoModel.from_pretrained(...)`, `self.model = model.to(device).eval()`, or from a method
    of the class that returns it after putting it in eval mode, `self.seg_net, self.cls_net =
    self.init_nets()`), or binds it only
    to a parameter of `__init__` that every construction in the file fills with a model put in
    eval mode (`unet.eval()`, then `PipelineLike(vae, unet, ...)`) or with an attribute of the
    constructing class built only of layers without train/eval behaviour (`Sampler(self.encoder,
    self.decoder)`, the decoder an LSTM and a Linear head), or only to parameters, one of
    them, in a method other than `__init__`, named as the model to evaluate (`def
    on_epoch_end(self, epoch, model_eval): self.net = model_eval`: a callback handed the model
    its caller prepared for evaluation), nor in a method every caller of which, calling it on
    an object, first put that object's attribute in eval mode (`rf.model.eval()`, then
    `images = rf.sample(noise, cond)`), nor an attribute
    bound only to an Ultralytics model object (`self.model = YOLO(path)`, whose call runs a
    predictor that sets eval mode and `inference_mode` itself).

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
            named_or_switched = (
                name_says_evaluation(analysis, function, model)
                or eval_switch_before(analysis, function, call) not in (None, model)
            )
            if not (named_or_switched or analysis.context(call).grad_disabled):
                continue
            if in_eval_mode(analysis, function, call, model):
                continue
            if not named_or_switched and _feeds_training(analysis, function):
                continue  # a no-grad pass computing what training consumes, in training's mode
            if not named_or_switched and _precedes_helper_step(analysis, call):
                continue  # PPO's advantages under no_grad, then `update(batch)` in the same loop
            built = construction_of(analysis, function, model, call, unwrap=tuple(MODEL_WRAPPERS))
            if built is not None and arrives_in_eval_mode(built) or named_model_is_mode_independent(
                    analysis, function, model, call):
                continue
            message = (
                f"`{model}` runs in an evaluation context but is never put in eval mode, so dropout and "
                f"batch-norm behave as in training. Call `{model}.eval()` first."
            )
            # `.eval()` only on a known module, never where the function goes on to train.
            known = built is not None and constructed_kind(analysis, built) == "model"
            safety = "safe" if known and not _goes_on_to_train(analysis, function, model) else "unsafe"
            finding = self.finding(call, message, f"Insert `{model}.eval()` before evaluating",
                                   data={"model": model, "safety": safety})
            if finding.fix is not None and safety == "unsafe":
                finding.fix = FixInfo(finding.fix.title, safety)
            if built is not None:
                finding.related.append(Related.at(built, f"`{model}` is built here"))
            yield finding
        for run in trainer_model_calls(analysis):
            evaluation = analysis.context(run.call).grad_disabled or named_for_evaluation(run.function)
            if not evaluation or run.eval_before is not None:
                continue
            if self_model_switched(analysis, run.function.class_node, run.model[len("self."):]):
                continue  # the class manages the model's mode (in another method)
            if attribute_is_mode_independent(analysis, run.function.class_node, run.model[len("self."):]):
                continue  # a fixed filter built of convolutions and pads: eval mode changes nothing
            if attribute_loaded_in_eval_mode(analysis, run.function.class_node, run.model[len("self."):]):
                continue  # `self.model, self.preprocess = clip.load(...)`: it arrives in eval mode
            if _attribute_handed_in_eval_mode(analysis, run.function.class_node, run.model[len("self."):]):
                continue  # `unet.eval()`, then `PipelineLike(..., unet, ...)` binding `self.unet = unet`
            if _attribute_handed_in_mode_independent(analysis, run.function.class_node, run.model[len("self."):]):
                continue  # `Sampler(self.encoder, self.decoder)` of a decoder without dropout or batch norm
            if _attribute_handed_in_for_evaluation(analysis, run.function.class_node, run.model[len("self."):]):
                continue  # `def on_epoch_end(self, epoch, model_eval): self.net = model_eval`
            if _callers_switch_attribute_to_eval(analysis, run.function, run.model[len("self."):]):
                continue  # `rf.model.eval()`, then `rf.sample(noise, cond)`
            message = (
                f"`{run.model}` runs in an evaluation context but is never put in eval mode, so dropout and "
                f"batch-norm behave as in training. Call `{run.model}.eval()` first."
            )
            # Nothing in the class switches the model back to train: an inserted eval() would leak.
            finding = self.finding(run.call, message, f"Insert `{run.model}.eval()` before evaluating",
                                   data={"model": run.model, "safety": "unsafe"})
            if finding.fix is not None:
                finding.fix = FixInfo(finding.fix.title, "unsafe")
            yield finding


def _feeds_training(analysis: Analysis, function) -> bool:
    """Every call of the function binds its result to names that a later call in the caller
    hands to a function of the file that trains (`bank = init_memory(loader, model)`, then
    `train(loader, model, optimizer, bank)`): the no-grad pass computes what the training
    consumes (a memory bank, pseudo-labels), in the mode the training runs in on purpose."""
    sites = analysis.callers(function)
    if function.is_module or not sites:
        return False
    trainers = {id(loop.function) for loop in analysis.training_loops if loop.function is not function}
    for site in sites:
        stmt = analysis.statement_of(site)
        if not (isinstance(stmt, ast.Assign) and stmt.value is site):
            return False
        names = {n.id for target in stmt.targets for n in ast.walk(target) if isinstance(n, ast.Name)}
        after = (site.lineno, site.col_offset)
        if not any((call.lineno, call.col_offset) > after and _passes_any(call, names)
                   and any(id(f) in trainers for f in analysis.function_named(call_name(call) or ""))
                   for call in analysis.context(site).function.calls):
            return False
    return True


def _precedes_helper_step(analysis: Analysis, call: ast.Call) -> bool:
    """The no-grad run's result feeds a training step that a helper of the file runs later in
    the same loop (`epoch_data = adv_module(epoch_data)` under `no_grad`, then
    `buffer.extend(epoch_data)` and `for mb in buffer: update(mb)` with `def update(batch):
    ... loss.backward()` beside it): the pass computes what the step consumes (PPO's
    advantages, targets) in training's mode on purpose, as it would in a function that
    backpropagates itself (never checked). Not a rollout whose actions the update ignores."""
    context = analysis.context(call)
    statement = analysis.statement_of(call)
    if not context.grad_disabled or not context.loops or not (
            isinstance(statement, ast.Assign) and statement.value is call):
        return False
    at = (call.lineno, call.col_offset)
    outer = context.loops[0]
    fed = _names_fed(outer, {n.id for t in statement.targets for n in ast.walk(t) if isinstance(n, ast.Name)}, at)
    for loop in analysis.loops:
        inside = loop
        while inside is not None and inside is not outer:
            inside = inside.parent
        if inside is None:
            continue  # not the outermost loop holding the run, nor a loop nested in it
        if any((step.lineno, step.col_offset) > at and _passes_any(step, fed, deep=True)
               for step in analysis.helper_step_calls(loop)):
            return True
    return False


def _names_fed(loop, names: set[str], at: tuple[int, int]) -> set[str]:
    """`names` and what the loop's statements after `at` derive from them: names assigned from
    them, a `for` target iterating them, a container they are added to (`buffer.extend(x)`)."""
    fed = set(names)
    later = [stmt for stmt in loop.statements if (stmt.lineno, stmt.col_offset) > at]
    changed = True
    while changed:
        changed = False
        for stmt in later:
            targets: list[ast.AST] = []
            if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and stmt.value is not None \
                    and mentions_any(stmt.value, fed):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            elif isinstance(stmt, (ast.For, ast.AsyncFor)) and mentions_any(stmt.iter, fed):
                targets = [stmt.target]
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
                    and isinstance(stmt.value.func, ast.Attribute) and isinstance(stmt.value.func.value, ast.Name) \
                    and _passes_any(stmt.value, fed, deep=True):
                targets = [stmt.value.func.value]
            new = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)} - fed
            if new:
                fed |= new
                changed = True
    return fed


def _passes_any(call: ast.Call, names: set[str], deep: bool = False) -> bool:
    """The call passes one of `names` (with `deep`, anywhere in an argument: `mb.to(device)`)."""
    passed = list(call.args) + [k.value for k in call.keywords]
    if deep:
        return any(mentions_any(arg, names) for arg in passed)
    return any(isinstance(arg, ast.Name) and arg.id in names for arg in passed)


def _goes_on_to_train(analysis: Analysis, function, model: str) -> bool:
    """The function (or a local function it calls) steps an optimizer, backpropagates or puts
    `model` back in train mode: an `eval()` inserted here would leak into training."""
    if analysis.switched(function, model, "train"):
        return True
    scopes = [function] + [f for c in function.calls for f in analysis.function_named(call_name(c) or "")]
    for scope in scopes:
        roles = analysis.roles_for(scope)
        if analysis.computes_gradients(scope) or any(roles.is_optimizer_step(c) for c in scope.calls):
            return True
    return False


def _constructions_filling(analysis: Analysis, cls: ast.ClassDef, attr: str):
    """(`__init__`, its parameter, the constructions of the class in the file) when `self.<attr>`
    is only ever bound to that one parameter of `__init__` (`self.unet = unet`); else None."""
    from torch_lsp.roles import self_attribute_values

    init = next((f for f in analysis.functions if f.class_node is cls and f.name == "__init__"), None)
    values = self_attribute_values(analysis, cls).get(attr, [])
    if init is None or not values or not all(isinstance(v, ast.Name) and v.id in init.params for v in values):
        return None
    param = values[0].id
    if any(v.id != param for v in values) or any(
            f.class_node is cls and f is not init and any(
                is_self_attribute_named(t, attr) for stmt in f.statements if isinstance(stmt, ast.Assign) for t in stmt.targets)
            for f in analysis.functions):
        return None  # another parameter, or another method, binds it too
    sites = [c for c in analysis.calls if isinstance(c.func, ast.Name) and c.func.id == cls.name]
    return (init, param, sites) if sites else None


def _attribute_handed_in_mode_independent(analysis: Analysis, cls: ast.ClassDef, attr: str) -> bool:
    """`self.<attr>` is only ever bound to a parameter of `__init__`, and every construction of
    the class passes for it an attribute of the constructing class built only of layers without
    train/eval behaviour (`Sampler(self.encoder, self.decoder)` with `self.decoder =
    DecoderRNN(...)` of an LSTM and Linear heads): eval mode would change nothing."""
    from torch_lsp.mode_behaviour import attribute_is_mode_independent

    def mode_independent(site: ast.Call, arg: ast.AST | None) -> bool:
        owner = analysis.context(site).function.class_node
        return (is_self_attribute(arg) and owner is not None and owner is not cls
                and attribute_is_mode_independent(analysis, owner, arg.attr))

    return _every_construction_passes(analysis, cls, attr, mode_independent)


def _attribute_handed_in_eval_mode(analysis: Analysis, cls: ast.ClassDef, attr: str) -> bool:
    """`self.<attr>` is only ever bound to a parameter of `__init__` (`self.unet = unet`), the
    class is built in the file, and every construction passes for that parameter a model its
    function puts in eval mode (`unet.eval()`, then `pipe = PipelineLike(vae, unet, ...)`)."""
    return _every_construction_passes(analysis, cls, attr, lambda site, arg: isinstance(arg, ast.Name) and in_eval_mode(
        analysis, analysis.context(site).function, site, arg.id))


def _every_construction_passes(analysis: Analysis, cls: ast.ClassDef, attr: str, accepts) -> bool:
    """`self.<attr>` is only ever bound to one parameter of `__init__`, and `accepts(site, arg)`
    holds for what every construction of the class in the file passes for it."""
    filled = _constructions_filling(analysis, cls, attr)
    if filled is None:
        return False
    init, param, sites = filled
    return all(accepts(site, analysis.argument_for(site, init, param)) for site in sites)


def _attribute_handed_in_for_evaluation(analysis: Analysis, cls: ast.ClassDef, attr: str) -> bool:
    """Every binding of `self.<attr>` is a parameter of the method binding it (the model comes from
    the callers), and a method other than `__init__` rebinds it to a parameter named as the model
    to evaluate (`def on_epoch_end(self, epoch, model_eval): self.net = model_eval`): an evaluation
    callback handed, at each evaluation, the model its caller has prepared for it; setting the
    mode is the caller's part."""
    handed_for_evaluation = False
    bound = False
    for function in analysis.functions:
        if function.class_node is not cls:
            continue
        for stmt in function.statements:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else \
                [stmt.target] if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) else []
            for target in targets:
                if not any(is_self_attribute_named(node, attr) for node in ast.walk(target)):
                    continue
                value = stmt.value
                if not (is_self_attribute_named(target, attr) and isinstance(value, ast.Name) and value.id in function.params):
                    return False  # built, loaded or unpacked here: not (only) handed in
                bound = True
                if function.name != "__init__" and _names_model_for_evaluation(value.id):
                    handed_for_evaluation = True
    return bound and handed_for_evaluation


def _callers_switch_attribute_to_eval(analysis: Analysis, method, attr: str) -> bool:
    """The method is called in the file, and every call is `obj.<method>(...)` on a plain name
    whose function put `obj.<attr>` in eval mode before it, not back in train (`rf.model.eval()`,
    then `images = rf.sample(noise, cond)`): the caller sets the mode of the model the object
    holds, as it would for a model handed in."""
    sites = analysis.callers_outside(method)
    if not sites:
        return False
    for site in sites:
        receiver = site.func.value if isinstance(site.func, ast.Attribute) else None
        if not isinstance(receiver, ast.Name):
            return False
        if last_switch_before(analysis.context(site).function, site, f"{receiver.id}.{attr}") != "eval":
            return False
    return True


def _names_model_for_evaluation(name: str) -> bool:
    """`model_eval`, `eval_net`, `evalModel`: a word of the name says evaluation, another the model."""
    words = [w.lower() for w in IDENTIFIER_WORDS.split(name) if w]
    return any(w.startswith("eval") for w in words) and any(w in _MODEL_WORDS for w in words)


_MODEL_WORDS = frozenset({"model", "net", "network", "module"})

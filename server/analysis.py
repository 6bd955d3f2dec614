"""Parse once per document version and compute the facts every rule shares.

An `Analysis` knows, for one file:
- how each local name resolves through the imports (`F.softmax` -> `torch.nn.functional.softmax`);
- for every statement and call: the enclosing function, the enclosing loops of that
  function, whether autograd is disabled there, and the `if`s that guard it;
- which loops train (call `.backward()` or `<optimizer>.step()`), which of them
  hold those calls directly (the loops whose body runs once per optimisation step),
  and which names a loop rebinds each iteration;
- which calls evaluate a model (`model.eval()`, `validate(model)`, model runs in an
  evaluation context) — the facts TL102, TL103 and TL302 and their fixes share;
- which names are models, optimizers, schedulers, loss modules, losses, devices,
  and which values carry the autograd graph (`roles`).

Rules only read these facts; none of them walks the tree again for something
another rule needs.  Facts that other modules compute on first use (the shape
report, the fixes' libcst tree) live in `Analysis.facts`, one typed cache; pure
questions about single nodes are in `syntax_nodes`.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any, Callable, Hashable, Iterator, TypeVar

from torch_lsp.fact_cache import FactCache, FactKey
from torch_lsp.incremental_parse import ParsedVersion, reparse_edit
from torch_lsp.notebooks import shown_as_cell_output
from torch_lsp.parsing import SyntaxIssue, parse_source
from torch_lsp.roles import DEVICE_NAME, ScopeRoles, compute_roles
from torch_lsp.statement_facts import StatementFacts
from torch_lsp.statement_walk import (
    BLOCK_FIELDS, FUNCTION_NODES, LOOP_NODES, TRY_NODES, WalkParts, walk_parts,
)
from torch_lsp.statement_walk import position as _position
from torch_lsp.syntax_index import syntax_index
from torch_lsp.syntax_nodes import (
    accumulation, argument, call_name, dotted, is_self_attribute, is_self_attribute_named, keyword, mentions_any, unmoved,
    walk_nodes,
)
from torch_lsp.text import LineIndex
from torch_lsp.workspace_files import reading_files

if TYPE_CHECKING:
    from torch_lsp.project_wrappers import WrapperUse

T = TypeVar("T")
_MISSING = object()
FunctionNode = FUNCTION_NODES
LoopNode = LOOP_NODES
_WALK_PARTS: FactKey[WalkParts] = FactKey("analysis.walk_parts")
_IMPORT_BINDINGS: FactKey[dict[str, str]] = FactKey("analysis.import_bindings")
_CALL_QUALNAMES: FactKey[dict[int, str | None]] = FactKey("analysis.call_qualnames")

_GRAD_OFF = {
    "torch.no_grad",
    "torch.inference_mode",
    "torch.autograd.no_grad",
    "torch.autograd.inference_mode",
    "torch.autograd.grad_mode.no_grad",
    "torch.autograd.grad_mode.inference_mode",
    # MONAI's `with eval_mode(net):` puts the nets in eval mode under `torch.no_grad()`.
    "monai.networks.eval_mode",
    "monai.networks.utils.eval_mode",
}
# Library context managers that put the nets they are given in eval mode for the `with` block
# and restore their mode after it (MONAI's; it also turns autograd off, see `_GRAD_OFF`).
_LIBRARY_EVAL_CONTEXTS = {"monai.networks.eval_mode", "monai.networks.utils.eval_mode"}
_GRAD_ON = {"torch.enable_grad", "torch.autograd.enable_grad", "torch.autograd.grad_mode.enable_grad"}
_GRAD_SET = {"torch.set_grad_enabled", "torch.autograd.set_grad_enabled", "torch.autograd.grad_mode.set_grad_enabled"}


_TORCH_ECOSYSTEM = {
    "torch", "torchvision", "torchaudio", "torchtext", "functorch", "pytorch_lightning", "lightning", "timm",
    "transformers", "accelerate", "torchmetrics", "ignite", "kornia", "diffusers", "peft", "einops",
}


@dataclass(eq=False)
class FunctionInfo:
    """A `def` (or the module itself, with `node` the `ast.Module`)."""

    node: ast.AST
    name: str
    class_node: ast.ClassDef | None = None
    no_grad_decorated: bool = False
    # The project decorator that turns autograd off here (`@smart_inference_mode()`), if any.
    grad_off_decorator: "WrapperUse | None" = None
    calls: list[ast.Call] = field(default_factory=list)
    statements: list[ast.stmt] = field(default_factory=list)

    @property
    def is_module(self) -> bool:
        return isinstance(self.node, ast.Module)

    @cached_property
    def params(self) -> list[str]:
        if self.is_module:
            return []
        a = self.node.args
        names = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs]
        if a.vararg:
            names.append(a.vararg.arg)
        if a.kwarg:
            names.append(a.kwarg.arg)
        return names

    @property
    def is_method(self) -> bool:
        return self.class_node is not None


@dataclass(eq=False)
class LoopInfo:
    node: ast.AST
    function: FunctionInfo
    parent: "LoopInfo | None"
    calls: list[ast.Call] = field(default_factory=list)  # at any depth (same function)
    direct_calls: list[ast.Call] = field(default_factory=list)  # not inside a nested loop
    statements: list[ast.stmt] = field(default_factory=list)  # at any depth

    @property
    def header_line(self) -> int:
        return self.node.lineno


@dataclass(frozen=True)
class Context:
    """Where a statement or call sits."""

    function: FunctionInfo
    loops: tuple[LoopInfo, ...] = ()
    grad_disabled: bool = False
    guards: tuple[tuple[ast.If, bool], ...] = ()  # (if statement, True when in its body)
    with_items: tuple[ast.withitem, ...] = ()

    @property
    def loop(self) -> LoopInfo | None:
        return self.loops[-1] if self.loops else None


class Analysis:
    """Everything the rules need about one version of one file."""

    def __init__(self, source: str, path: str | None = None, torch_version: tuple[int, int] | None = None,
                 previous: ParsedVersion | None = None, *, part_of: "Analysis | None" = None,
                 statements: list[ast.stmt] | None = None):
        """The analysis of `source`; with `part_of` (an analysis of the whole file) and
        `statements` (some of its top-level statements), the analysis of a file holding only
        those statements, at their places in `part_of`'s text (`part_analysis`)."""
        self.source = source
        self.path = path or "<stdin>"
        # The PyTorch the file is checked against (`torch_lsp.torch_version`); None: the newest.
        self.torch_version = torch_version
        if part_of is not None:
            self.lines = part_of.lines
            self.tree, self.syntax_errors = ast.Module(body=list(statements or ()), type_ignores=[]), []
            # The statements' facts are the whole file's (the same objects, so the same facts).
            self.statement_facts = StatementFacts(self.tree, part_of.statement_facts)
        else:
            self.lines = LineIndex(source)
            # An edit of `previous` re-parses only the top-level statements it touched.
            tree = reparse_edit(previous, source) if previous is not None else None
            self.tree, self.syntax_errors = (tree, []) if tree is not None else parse_source(source)
            # Facts of single top-level statements: those the edit left untouched keep theirs.
            self.statement_facts = StatementFacts(self.tree, previous.statements if tree is not None else None)
        self.imports: dict[str, str] = {}
        self._call_qualnames: dict[int, str | None] = {}
        self._computes_gradients: dict[FunctionInfo, bool] = {}  # memo: several rules ask it per function
        self.parents: dict[ast.AST, ast.AST] = {}
        self.contexts: dict[ast.AST, Context] = {}
        self.calls: list[ast.Call] = []
        self.statements: list[ast.stmt] = []  # every statement, in source order
        self.functions: list[FunctionInfo] = []
        self.functions_per_statement: list[int] = []  # how many of them each top-level statement holds
        self.loops: list[LoopInfo] = []
        # The walk's parts of each top-level statement (`statement_walk`), kept across versions.
        self.walk_parts: list[WalkParts] = []
        self._header_calls: dict[int, list[ast.Call]] = {}  # of the top-level statement being walked
        # The project-wrapper questions of the top-level def whose walk is being recorded.
        self._wrapper_answers: list | None = None
        self.classes: dict[str, ast.ClassDef] = {}
        self.module_scope = FunctionInfo(self.tree, "<module>")
        self.functions.append(self.module_scope)
        # Facts other modules compute on first use (the shape report, the libcst tree, the
        # project's grad-off wrappers, which the walk below asks about).
        self.facts = FactCache()
        # The other files of the project the walk reads (a grad-off wrapper imported from
        # `utils.py`): (module, importer path) -> their analyses (`workspace_files.reading_files`).
        self.files_read: dict = {}
        # A part's analysis (`part_analysis`) reads the facts of the whole file from the whole
        # file's analysis; every analysis notes those it read (`file_fact`).
        self.part_of = part_of
        self.file_facts_read: dict[Hashable, tuple[Callable[["Analysis"], Any], Any]] = {}
        self._file_facts: dict[Hashable, Any] = {}  # computed here, for the whole file
        self._collect_imports()
        with reading_files() as self.files_read:
            self._walk_module()
        self._seed_call_qualnames()
        self.roles: dict[FunctionInfo, ScopeRoles] = compute_roles(self)

    def file_fact(self, key: Hashable, compute: Callable[["Analysis"], T]) -> T:
        """`compute(analysis)` of the whole file, once per version: a fact that a finding in one
        part of the file reads of all of it (whether the file trains anywhere, puts anything on
        a GPU).  The analysis of a part asks the whole file's, and both note what they read:
        the findings of a part computed with it hold while the whole file gives the same value
        (`rule_parts`).  `key` names the fact (with its argument, for facts about a name)."""
        if self.part_of is not None:
            value = self.part_of.file_fact(key, compute)
        else:
            found = self._file_facts.get(key, _MISSING)
            value = self._file_facts[key] = compute(self) if found is _MISSING else found
        self.file_facts_read[key] = (compute, value)
        return value

    @property
    def parsed(self) -> ParsedVersion:
        """This version's text and tree, for parsing the next version as an edit of it."""
        return ParsedVersion(self.source, self.lines, self.tree, self.syntax_errors, self.statement_facts)

    # ------------------------------------------------------------------ names
    def _collect_imports(self) -> None:
        """Import bindings from every statement (imports are statements: no expression walk).
        The last top-level statement's bindings first, so that an earlier one's win, as one
        stack walk of the whole body gives them."""
        for bindings in reversed(self.statement_facts.each(_IMPORT_BINDINGS, _import_bindings)):
            self.imports.update(bindings)
        if "torch" not in self.imports and _star_import_brings_torch(self.tree.body):
            self.imports["torch"] = "torch"

    @cached_property
    def assigned_values(self) -> dict[str, list[ast.AST]]:
        """The values assigned to each plain name anywhere in the file (`name = value`), in no
        particular order; each top-level statement's kept while it is unchanged."""
        values: dict[str, list[ast.AST]] = {}
        index = syntax_index(self)
        for assigned in self.statement_facts.each(
                _PLAIN_ASSIGNMENTS, lambda statement: _plain_assignments(index.of_statement(statement))):
            for name, value in assigned:
                values.setdefault(name, []).append(value)
        return values

    @cached_property
    def uses_torch(self) -> bool:
        """The file imports PyTorch or a library built on it; other files get no findings (a
        part of a file is PyTorch code when the whole file is)."""
        if self.part_of is not None:
            return self.part_of.uses_torch
        roots = {name.split(".")[0] for name in self.imports.values()}
        return bool(roots & _TORCH_ECOSYSTEM)

    @cached_property
    def is_test_file(self) -> bool:
        """A test module or test utility (`test_*.py`, `*_test.py`, `conftest.py`, `test_utils/`)."""
        parts = self.path.replace("\\", "/").split("/")
        filename = parts[-1]
        if filename.startswith("test_") or filename.endswith("_test.py") or filename == "conftest.py":
            return True
        return any(p in ("testing", "test_utils") for p in parts[:-1])

    @cached_property
    def defines_test_case(self) -> bool:
        """The module defines a `unittest.TestCase` class at its top level: a test module whose
        file name escapes `is_test_file` (`tests/integration/maml_test_notravis.py`, whose
        `TestCase` runs the training script's `main()` to assert a final accuracy)."""
        # A fact of the whole file (`file_fact`): a part's findings are kept only while it holds.
        return self.file_fact("defines a unittest.TestCase", lambda analysis: any(
            isinstance(stmt, ast.ClassDef) and any(_last_name(base) == "TestCase" for base in stmt.bases)
            for stmt in analysis.tree.body))

    @cached_property
    def imports_test_suite(self) -> bool:
        """The module imports from a test package (`tests_pytorch.helpers`, `tests.utils`) or
        imports pytest itself (a task or fixture module beside the tests, `tests/task.py`): a
        helper of a test suite, whose tiny fixtures load in-process on purpose."""
        if self.part_of is not None:
            return self.part_of.imports_test_suite
        roots = [name.split(".")[0] for name in self.imports.values()]
        return any(root == "pytest" or re.match(r"tests?(_|$)", root) for root in roots)

    def qualname(self, node: ast.AST | None) -> str | None:
        """Dotted name of `node` resolved through the imports, or None."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and node.id in self.imports:
            return ".".join([self.imports[node.id], *reversed(parts)])
        return None

    def _seed_call_qualnames(self) -> None:
        """`call_qualname` of every call the walk reached, taken per top-level statement from
        the previous version when it shares the statement and the imports: the rules ask it
        of every call, and it depends on nothing else."""
        parts = {id(statement): part for statement, part in zip(self.tree.body, self.walk_parts)}
        qualname = self.qualname

        def qualnames(statement: ast.stmt) -> dict[int, str | None]:
            return {id(call): qualname(call.func) for calls in parts[id(statement)].calls_by_owner.values()
                    for call in calls}

        table = self._call_qualnames
        for kept in self.statement_facts.each_under(_CALL_QUALNAMES, tuple(self.imports.items()), qualnames):
            table.update(kept)

    def call_qualname(self, call: ast.Call) -> str | None:
        """`qualname` of the called function, memoised: rules ask it of every call, often."""
        cache = self._call_qualnames
        key = id(call)
        try:
            return cache[key]
        except KeyError:
            found = cache[key] = self.qualname(call.func)
            return found

    def is_torch_call(self, call: ast.AST, *qualnames: str) -> bool:
        return isinstance(call, ast.Call) and self.call_qualname(call) in qualnames

    # ---------------------------------------------------------------- contexts
    def context(self, node: ast.AST) -> Context:
        """Context of a statement or call (or of the statement holding any node)."""
        current = node
        while current is not None:
            found = self.contexts.get(current)
            if found is not None:
                return found
            current = self.parents.get(current)
        return Context(self.module_scope)

    def statement_of(self, node: ast.AST) -> ast.stmt | None:
        current = node
        while current is not None and not isinstance(current, ast.stmt):
            current = self.parents.get(current)
        return current

    def body_statement(self, owner: ast.AST, node: ast.AST) -> ast.stmt | None:
        """The statement of `owner`'s own body (a loop's, a function's, the module's) that
        holds `node`; None when `node` is not under that body."""
        stmt = self.statement_of(node)
        while stmt is not None and self.parents.get(stmt) not in (owner, None):
            stmt = self.parents.get(stmt)
        return stmt if stmt is not None and any(s is stmt for s in owner.body) else None

    def roles_for(self, node_or_function: ast.AST | FunctionInfo) -> ScopeRoles:
        function = node_or_function if isinstance(node_or_function, FunctionInfo) else self.context(node_or_function).function
        return self.roles[function]

    def block_of(self, stmt: ast.stmt) -> list[ast.stmt] | None:
        """The statement list (a body, `else` or `finally` block) that holds `stmt`."""
        parent = self.parents.get(stmt)
        blocks = [self.tree.body] if parent is None else [
            getattr(parent, name, []) for name in ("body", "orelse", "finalbody")
        ]
        for block in blocks:
            if any(s is stmt for s in block):
                return block
        return None

    def function_named(self, name: str) -> list[FunctionInfo]:
        return self._functions_by_name.get(name, [])

    @cached_property
    def _functions_by_name(self) -> dict[str, list[FunctionInfo]]:
        table: dict[str, list[FunctionInfo]] = {}
        for function in self.functions:
            if not function.is_module:
                table.setdefault(function.name, []).append(function)
        return table

    @cached_property
    def call_sites(self) -> dict[str, list[ast.Call]]:
        """Calls of local functions by name: `f(...)`, `self.f(...)`, `obj.f(...)`."""
        sites: dict[str, list[ast.Call]] = {}
        local = set(self._functions_by_name)
        for call in self.calls:
            name = call_name(call)
            if name in local:
                sites.setdefault(name, []).append(call)
        return sites

    def grad_mode_effect(self, expr: ast.AST) -> bool | None:
        """True if a `with`/decorator expression disables autograd, False if it enables it."""
        target = expr.func if isinstance(expr, ast.Call) else expr
        name = self.qualname(target)
        if name in _GRAD_OFF:
            if isinstance(expr, ast.Call) and expr.args and _is_false(expr.args[0]):
                return None  # inference_mode(False)
            return True
        if name in _GRAD_ON:
            return False
        if name in _GRAD_SET and isinstance(expr, ast.Call) and expr.args:
            if _is_false(expr.args[0]):
                return True
            if isinstance(expr.args[0], ast.Constant) and expr.args[0].value is True:
                return False
        return None

    def _project_grad_off(self, expr: ast.AST, as_context: bool) -> "WrapperUse | None":
        """A project decorator or context manager that turns autograd off (`project_wrappers`)."""
        target = expr.func if isinstance(expr, ast.Call) else expr
        if not isinstance(target, (ast.Name, ast.Attribute)):
            return None
        from torch_lsp.project_wrappers import wraps_grad_off

        answer = wraps_grad_off(self, expr, as_context)
        if self._wrapper_answers is not None:  # a top-level def's walk being recorded
            local = isinstance(target, ast.Name) and target.id not in self.imports
            self._wrapper_answers.append((expr, as_context, answer, local))
        return answer

    # ------------------------------------------------------------------- walk
    def _walk_module(self) -> None:
        """The walk of every statement, handing out contexts; the parents and the calls under
        each header come from `statement_walk`, computed once per top-level statement."""
        parts = self.walk_parts = self.statement_facts.each(_WALK_PARTS, walk_parts)
        ctx = Context(self.module_scope)
        imports = tuple(self.imports.items())
        for statement, part in zip(self.tree.body, parts):
            self.parents.update(part.parents)
            self._header_calls = part.calls_by_owner
            before = len(self.functions)
            if statement.__class__ in _DEFINITIONS:
                kept = self.statement_facts.kept(statement, _DEF_WALK)
                if kept is not None and self._def_walk_holds(kept, imports):
                    self._replay_def_walk(kept, ctx)
                else:
                    self.statement_facts.keep(statement, _DEF_WALK, self._recorded_def_walk(statement, ctx, imports))
            else:
                self._walk_statement(statement, ctx)
            self.functions_per_statement.append(len(self.functions) - before)
        self._header_calls = {}

    # A top-level `def` or `class` is walked once while it is unchanged: what its walk hands out
    # reads nothing of the rest of the file but the imports and the answers about project
    # grad-off wrappers its decorators and `with` items asked (`_DefWalk`).  What sits at module
    # level in it (the statement itself, a class body's statements, decorators' calls) gets this
    # version's module context again; a statement whose walk put anything at module level under
    # another context (a guard, a loop in a class body) is walked every version.
    def _recorded_def_walk(self, statement: ast.stmt, ctx: Context, imports: tuple) -> "_DefWalk | None":
        counts = len(self.statements), len(self.functions), len(self.loops), len(self.calls)
        self._wrapper_answers = answers = []
        reads_before = len(self.files_read)
        # Its contexts in a dict of their own, merged after: they are kept in the order handed out.
        contexts, self.contexts = self.contexts, {}
        try:
            self._walk_statement(statement, ctx)
        finally:
            self._wrapper_answers = None
            handed_out, self.contexts = self.contexts, contexts
            contexts.update(handed_out)
        if len(self.files_read) != reads_before or any(not local for _, _, _, local in answers):
            return None  # it read another file of the project: walked again each version
        module = ctx.function
        entries = []  # (node, its context; None for the module's)
        at_module = set()
        for node, found in handed_out.items():
            if found.function is module:
                if found is not ctx:
                    return None
                entries.append((node, None))
                at_module.add(id(node))
            else:
                entries.append((node, found))
        loops = self.loops[counts[2]:]
        if any(loop.function is module for loop in loops):
            return None
        statements, calls = self.statements[counts[0]:], self.calls[counts[3]:]
        return _DefWalk(imports, tuple((expr, as_context, answer) for expr, as_context, answer, _ in answers),
                        entries, statements, [s for s in statements if id(s) in at_module], calls,
                        [c for c in calls if id(c) in at_module], self.functions[counts[1]:], loops,
                        [node for node in statements if node.__class__ is ast.ClassDef])

    def _def_walk_holds(self, kept: "_DefWalk", imports: tuple) -> bool:
        if kept.imports is not imports and kept.imports != imports:
            return False
        return all(_same_wrapper(self._project_grad_off(expr, as_context), answer)
                   for expr, as_context, answer in kept.wrapper_answers)

    def _replay_def_walk(self, kept: "_DefWalk", ctx: Context) -> None:
        module = ctx.function
        self.contexts.update([(node, ctx if found is None else found) for node, found in kept.contexts])
        self.statements.extend(kept.statements)
        module.statements.extend(kept.module_statements)
        self.calls.extend(kept.calls)
        module.calls.extend(kept.module_calls)
        self.functions.extend(kept.functions)
        self.loops.extend(kept.loops)
        for node in kept.classes:
            self.classes.setdefault(node.name, node)

    def _walk_block(self, body: list[ast.stmt], ctx: Context) -> None:
        for stmt in body:
            self._walk_statement(stmt, ctx)
            if stmt.__class__ is ast.Expr:
                effect = self._grad_mode_set(stmt.value, ctx)
                if effect is None and ctx.with_items:
                    effect = self._grad_mode_entered(stmt.value, ctx)
                if effect is not None and effect != ctx.grad_disabled:
                    ctx = Context(ctx.function, ctx.loops, effect, ctx.guards, ctx.with_items)

    def _grad_mode_set(self, value: ast.AST, ctx: Context) -> bool | None:
        """A statement `torch.set_grad_enabled(False)` inside a function (EDSR's `test()`):
        autograd stays off for the rest of the block, as if a `with` had entered it; `(True)`
        turns it back on. None for anything else (a bare `torch.no_grad()` does nothing)."""
        if ctx.function.is_module or value.__class__ is not ast.Call:
            return None
        if self.qualname(value.func) not in _GRAD_SET:
            return None
        return self.grad_mode_effect(value)

    def _grad_mode_entered(self, value: ast.AST, ctx: Context) -> bool | None:
        """`stack.enter_context(torch.no_grad())` in the body of `with ExitStack() as stack:`
        (detectron2's `inference_on_dataset`): the grad mode holds for the rest of the block,
        as if the `with` had entered it; None when `value` enters no grad mode."""
        if not (value.__class__ is ast.Call and value.func.__class__ is ast.Attribute
                and value.func.attr == "enter_context" and value.func.value.__class__ is ast.Name
                and len(value.args) == 1):
            return None
        stack = value.func.value.id
        if not any(item.optional_vars.__class__ is ast.Name and item.optional_vars.id == stack
                   and item.context_expr.__class__ is ast.Call
                   and self.qualname(item.context_expr.func) == "contextlib.ExitStack" for item in ctx.with_items):
            return None
        effect = self.grad_mode_effect(value.args[0])
        if effect is None and self._project_grad_off(value.args[0], as_context=True):
            effect = True
        return effect

    def _walk_statement(self, stmt: ast.stmt, ctx: Context) -> None:
        self.contexts[stmt] = ctx
        self.statements.append(stmt)
        ctx.function.statements.append(stmt)
        for loop in ctx.loops:
            loop.statements.append(stmt)
        if isinstance(stmt, FunctionNode):
            self._walk_function(stmt, ctx)
        elif isinstance(stmt, ast.ClassDef):
            self.classes.setdefault(stmt.name, stmt)
            self._record_calls(stmt, ctx)
            self._walk_block(stmt.body, ctx)
        elif isinstance(stmt, LoopNode):
            self._walk_loop(stmt, ctx)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            self._record_calls(stmt, ctx)
            disabled = ctx.grad_disabled
            for item in stmt.items:
                effect = self.grad_mode_effect(item.context_expr)
                if effect is None and self._project_grad_off(item.context_expr, as_context=True):
                    effect = True
                if effect is not None:
                    disabled = effect
            inner = Context(ctx.function, ctx.loops, disabled, ctx.guards, ctx.with_items + tuple(stmt.items))
            self._walk_block(stmt.body, inner)
        elif isinstance(stmt, ast.If):
            self._record_calls(stmt, ctx)
            self._walk_block(stmt.body, _guarded(ctx, stmt, True))
            self._walk_block(stmt.orelse, _guarded(ctx, stmt, False))
        elif isinstance(stmt, TRY_NODES):
            self._walk_block(stmt.body, ctx)
            for handler in stmt.handlers:
                self._record_calls(handler, ctx)
                self._walk_block(handler.body, ctx)
            self._walk_block(stmt.orelse, ctx)
            self._walk_block(stmt.finalbody, ctx)
        elif isinstance(stmt, ast.Match):
            self._record_calls(stmt, ctx)
            for case in stmt.cases:
                self._walk_block(case.body, ctx)
        else:
            self._record_calls(stmt, ctx)

    def _walk_function(self, node: ast.AST, ctx: Context) -> None:
        self._record_calls(node, ctx)  # in the decorators, the arguments' defaults and annotations, the return annotation
        class_node = self._enclosing_class(node)
        no_grad = any(self.grad_mode_effect(d) is True for d in node.decorator_list)
        wrapper = None
        if not no_grad:
            wrapper = next(filter(None, (self._project_grad_off(d, as_context=False) for d in node.decorator_list)), None)
            no_grad = wrapper is not None
        function = FunctionInfo(node, node.name, class_node, no_grad, wrapper)
        self.functions.append(function)
        self._walk_block(node.body, Context(function, (), no_grad))

    def _walk_loop(self, node: ast.AST, ctx: Context) -> None:
        self._record_calls(node, ctx)
        loop = LoopInfo(node, ctx.function, ctx.loop)
        self.loops.append(loop)
        inner = Context(ctx.function, ctx.loops + (loop,), ctx.grad_disabled, ctx.guards, ctx.with_items)
        self._walk_block(node.body, inner)
        self._walk_block(node.orelse, ctx)

    def _enclosing_class(self, node: ast.AST) -> ast.ClassDef | None:
        parent = self.parents.get(node)
        return parent if isinstance(parent, ast.ClassDef) else None

    def _record_calls(self, owner: ast.AST, ctx: Context) -> None:
        """The context of every call below the header of `owner` (a statement or an except
        handler), and the call lists of the file, the function and the loops."""
        calls = self._header_calls.get(id(owner))
        if calls:
            contexts = self.contexts
            for call in calls:
                contexts[call] = ctx
            self.calls.extend(calls)
            ctx.function.calls.extend(calls)
            for loop in ctx.loops:
                loop.calls.extend(calls)
            if ctx.loops:
                ctx.loops[-1].direct_calls.extend(calls)

    def moves_to_accelerator(self, batches_only: bool = False) -> bool:
        """The file moves work to a GPU (`.cuda()`, `.to("cuda")`, `.to(<device variable>)`);
        with `batches_only`, moves of models and loss modules do not count.  Syncs (TL401)
        and unpinned memory (TL405) only cost there."""
        return self.file_fact(("moves to an accelerator", batches_only), partial(_moves, batches_only=batches_only))

    def _moves_to_device(self, call: ast.Call, batches_only: bool) -> bool:
        if not isinstance(call.func, ast.Attribute) or self.qualname(call.func) is not None:
            return False  # `torch.cuda`, not a tensor method
        target = call.func.value
        if batches_only and isinstance(target, ast.Name):
            roles = self.roles_for(call)
            if roles.is_model(target.id) or roles.is_loss_module(target.id):
                return False
        return call.func.attr == "cuda" or _is_accelerator_device(self, call)

    def moves_batch_to_accelerator(self, call: ast.Call) -> bool:
        """`x.cuda()` or `x.to(device)` moving data (not a model) to a GPU; `x.to(out.device)`
        only follows another value's device and does not count unless that value is a model."""
        if not self._moves_to_device(call, batches_only=True):
            return False
        device = argument(call, 0, "device")
        if isinstance(device, ast.Attribute) and device.attr == "device" and isinstance(device.value, ast.Name):
            return self.roles_for(call).is_model(device.value.id)
        return True

    @property
    def framework_places_on_accelerator(self) -> bool:
        """A framework puts the work on the accelerator: `fabric.setup(...)`, `to_device` or
        `setup_dataloaders` of a Lightning `Fabric`, or `accelerator.prepare(...)` of an
        accelerate `Accelerator` (not one built with `accelerator="cpu"` / `cpu=True`)."""
        return self.file_fact("a framework places the work on an accelerator", _framework_places_on_accelerator)

    def steps_through_helper(self, loop: LoopInfo) -> bool:
        """The loop's own body calls a function of this file that backpropagates or steps an
        optimizer outside any loop of its own (`_backward(loss)` defined beside the loop): the
        loop runs once per step."""
        for call in loop.direct_calls:
            if not isinstance(call.func, ast.Name) or runs_an_attack(call):
                continue  # `attack_pgd(model, x, y)` backpropagates to the input, it trains nothing
            helpers = self.function_named(call.func.id)
            # a helper that loops itself (`train_epoch(...)` from an epoch loop) runs many steps per call
            if len(helpers) == 1 and any(
                    (id(c) in self._backward_call_ids or self.roles[helpers[0]].is_optimizer_step(c))
                    and not self.context(c).loops for c in helpers[0].calls):
                return True
        return False

    # ------------------------------------------------------------ loop facts
    @cached_property
    def training_loops(self) -> list[LoopInfo]:
        """Loops whose body (any depth, not nested defs) backpropagates or steps an optimizer."""
        return [loop for loop in self.loops if self.backward_calls(loop) or self.optimizer_steps(loop)]

    @cached_property
    def _backward_call_ids(self) -> set[int]:
        # From the call indexes, not every call: a backward call is named `backward` or
        # `manual_backward`, or resolves to `torch.autograd.backward` (however imported).
        found = {id(c) for c in self.iter_calls("backward", "manual_backward") if is_backward_call(self, c)}
        return found | {id(c) for c in self.calls_to("torch.autograd.backward")}

    def backward_calls(self, loop: LoopInfo, direct: bool = False) -> list[ast.Call]:
        calls = loop.direct_calls if direct else loop.calls
        backward = self._backward_call_ids
        return [c for c in calls if id(c) in backward]

    def optimizer_steps(self, loop: LoopInfo, direct: bool = False) -> list[ast.Call]:
        calls = loop.direct_calls if direct else loop.calls
        roles = self.roles[loop.function]
        return [c for c in calls if roles.is_optimizer_step(c)]

    def is_step_loop(self, loop: LoopInfo) -> bool:
        """A training loop whose own body (not a nested loop) backpropagates or steps: it runs once per step."""
        return bool(self.backward_calls(loop, direct=True) or self.optimizer_steps(loop, direct=True))

    def enclosing_step_loop(self, node: ast.AST) -> LoopInfo | None:
        for loop in reversed(self.context(node).loops):
            if self.is_step_loop(loop):
                return loop
        return None

    @cached_property
    def innermost_training_loops(self) -> list[LoopInfo]:
        """Training loops that hold no other training loop: the ones whose body takes the steps."""
        nested_in = set()
        for loop in self.training_loops:
            ancestor = loop.parent
            while ancestor is not None:
                nested_in.add(id(ancestor))
                ancestor = ancestor.parent
        return [loop for loop in self.training_loops if id(loop) not in nested_in]

    @cached_property
    def stepping_loops(self) -> list[LoopInfo]:
        """The loops whose iterations each take an optimizer step with the backward passes before it:
        the innermost training loops, and a loop that steps after training loops nested in it that
        only backpropagate (`for tasks in meta_batches:` around `for task in tasks: loss.backward()`,
        then `meta_opt.step()`; micro-batches accumulated, then one step)."""
        found = list(self.innermost_training_loops)
        innermost = {id(loop) for loop in found}
        for loop in self.training_loops:
            if id(loop) in innermost or not self.optimizer_steps(loop, direct=True):
                continue
            nested = [inner for inner in self.training_loops if inner is not loop and self._nested_in(inner, loop)]
            if nested and not any(self.optimizer_steps(inner) for inner in nested):
                found.append(loop)
        return found

    @staticmethod
    def _nested_in(inner: LoopInfo, outer: LoopInfo) -> bool:
        ancestor = inner.parent
        while ancestor is not None:
            if ancestor is outer:
                return True
            ancestor = ancestor.parent
        return False

    def loop_rebinds(self, loop: LoopInfo, name: str, besides: ast.stmt | None = None) -> bool:
        """`name` is (re)bound somewhere in the loop body (other than by `besides`): it does not outlive an iteration."""
        roles = self.roles_for(loop.function)
        if isinstance(loop.node, (ast.For, ast.AsyncFor)) and any(
            isinstance(n, ast.Name) and n.id == name for n in walk_nodes(loop.node.target)
        ):
            return True
        statements = {id(s) for s in loop.statements}
        for assignment in roles.assignments.get(name, ()):
            stmt = assignment.statement
            if stmt is besides:
                continue
            if id(stmt) in statements and not isinstance(stmt, ast.AugAssign) and not is_self_update(stmt, name):
                return True
        return False

    def loop_by_node(self, node: ast.AST) -> LoopInfo | None:
        for loop in self.loops:
            if loop.node is node:
                return loop
        return None

    # ------------------------------------------------------ mode & callers
    @cached_property
    def mode_switches(self) -> dict[FunctionInfo, list["ModeSwitch"]]:
        """`m.eval()` / `m.train()` / `m.train(False)` per function, on plain names."""
        table: dict[FunctionInfo, list[ModeSwitch]] = {f: [] for f in self.functions}
        custom = self._mode_setting_methods
        for call in self.calls:
            func = call.func
            if not isinstance(func, ast.Attribute) or func.attr not in ("eval", "train") and func.attr not in custom:
                continue
            mode = _mode_of(call) if func.attr in ("eval", "train") else custom[func.attr]
            if mode is None:
                continue
            name = _base_name(func.value)
            if name is None:
                stmt = self.statement_of(call)
                # `model = Net().to(device).eval()` switches the bound name.
                if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                    name = stmt.targets[0].id
            if name and name != "self" and name not in self.imports:
                table[self.context(call).function].append(ModeSwitch(name, mode, call))
        return table

    @cached_property
    def _mode_setting_methods(self) -> dict[str, str]:
        """Methods of the file's classes that set the object's mode and nothing else does
        otherwise: `def train_custom(self): ...; self.classifier_head.train()` (PPLM's
        discriminator trains its head and keeps its frozen encoder in eval mode).  A method name
        that classes of the file define with different modes is left out."""
        found: dict[str, set[str]] = {}
        for function in self.functions:
            if not function.is_method or function.name in ("train", "eval") or function.name.startswith("__"):
                continue
            modes = set()
            for call in function.calls:
                func = call.func
                if isinstance(func, ast.Attribute) and func.attr in ("eval", "train") \
                        and (is_self_attribute(func.value) or isinstance(func.value, ast.Name) and func.value.id == "self"):
                    modes.add(_mode_of(call))
            if modes:
                found.setdefault(function.name, set()).update(modes)
        return {name: modes.pop() for name, modes in found.items() if len(modes) == 1 and None not in modes}

    def custom_mode_of(self, call: ast.Call) -> str | None:
        """The mode `obj.train_custom()` sets, when it calls a mode-setting method of the file's
        classes (see `_mode_setting_methods`); None otherwise."""
        func = call.func
        return self._mode_setting_methods.get(func.attr) if isinstance(func, ast.Attribute) else None

    def switched(self, function: FunctionInfo, name: str, mode: str) -> list["ModeSwitch"]:
        return [m for m in self.mode_switches.get(function, ()) if m.name == name and m.mode == mode]

    def callers(self, function: FunctionInfo) -> list[ast.Call]:
        """Call sites of `function` in this file (by name; methods through `self.`/`obj.`), and
        the calls of a pick from a table listing it (`dispatched_calls`)."""
        sites = self.call_sites.get(function.name, [])
        if function.is_method:
            return [c for c in sites if isinstance(c.func, ast.Attribute)]
        named = [c for c in sites if isinstance(c.func, ast.Name)]
        if len(self.function_named(function.name)) > 1:
            named = [c for c in named if function in self.top_level_definition_run(self.function_named(function.name), c)]
        return named + dispatched_calls(self, function)

    def top_level_definition_run(self, functions: list[FunctionInfo], call: ast.Call) -> list[FunctionInfo]:
        """Of several top-level `def`s of one name (a notebook redefining its `get_model` or
        `accuracy` cell by cell), the one a call made by top-level code runs: the last defined
        before the call's statement, as the module runs top to bottom.  Every candidate for a
        call inside a function (run later, when any of them may be bound) or when the `def`s
        are not all top-level statements."""
        if len(functions) < 2 or not self.context(call).function.is_module \
                or not all(self.parents.get(f.node) is None for f in functions):
            return functions
        statement = self.body_statement(self.tree, call)
        before = [f for f in functions if statement is not None and f.node.lineno < statement.lineno]
        return [max(before, key=lambda f: f.node.lineno)] if before else functions

    def callers_outside(self, function: FunctionInfo) -> list[ast.Call]:
        """Its call sites but those in its own body: a recursive call (`test_split_fn(model, ...)`
        on each quarter of the image) runs in the mode and grad state the outer call set."""
        return [c for c in self.callers(function) if self.context(c).function is not function]

    def only_called_without_grad(self, function: FunctionInfo, _outer: frozenset = frozenset()) -> bool:
        """True when the function is called in this file, and every call runs with autograd off:
        under `no_grad` itself, or in a function only ever called that way (`test()` calls
        `benchmark()` under `no_grad`, and `benchmark()` calls `validation()`)."""
        sites = self.callers_outside(function)
        outer = _outer | {id(function)}
        return bool(sites) and all(
            self.context(c).grad_disabled or (
                id(self.context(c).function) not in outer
                and self.only_called_without_grad(self.context(c).function, outer))
            for c in sites)

    def computes_gradients(self, function: FunctionInfo) -> bool:
        """The function backpropagates or asks for gradients (so it is not plain evaluation)."""
        known = self._computes_gradients.get(function)
        if known is None:
            # A pure function of the function's calls and the imports: kept with its roles'
            # seed, so a version that shares the function asks its calls no more.
            kept = self.roles[function].kept
            known = kept.get("asks_for_gradients")
            if known is None:
                known = kept["asks_for_gradients"] = self._asks_for_gradients(function)
            self._computes_gradients[function] = known
        return known

    def _asks_for_gradients(self, function: FunctionInfo) -> bool:
        return any(self.asks_for_gradients(call) for call in function.calls)

    def asks_for_gradients(self, call: ast.Call) -> bool:
        """`call` backpropagates, takes gradients (`torch.autograd.grad`), or makes a tensor
        that requires them (`requires_grad_()`, `requires_grad=True`)."""
        if is_backward_call(self, call) or self.call_qualname(call) in ("torch.autograd.grad", "torch.func.grad"):
            return True
        if call_name(call) == "requires_grad_" or runs_an_attack(call):
            return True
        kw = keyword(call, "requires_grad")
        return kw is not None and isinstance(kw.value, ast.Constant) and kw.value.value is True

    def argument_for(self, call: ast.Call, function: FunctionInfo, param: str) -> ast.AST | None:
        """The expression a call passes for `param` of `function` (a `launches` call passes
        what follows the function)."""
        params = function.params
        if function.is_method and params and params[0] in ("self", "cls"):
            params = params[1:]
        if param not in params:
            return None
        return argument(call, params.index(param) + (1 if _launches(call, function) else 0), param)

    def launches(self, function: FunctionInfo) -> list[ast.Call]:
        """Calls that hand a top-level function of the file to an executor, which calls it with
        the arguments that follow it (`pool.submit(estimate_and_save, model, batch)`).  Empty for
        a method, or for a name several functions of the file have."""
        if function.is_method or len(self.function_named(function.name)) != 1:
            return []
        return [c for c in self._calls_by_name.get("submit", ()) if _launches(c, function)]

    @cached_property
    def calls_through_tables(self) -> dict[str, list[ast.Call]]:
        """Function name -> calls of a pick from a table listing it (`dispatched_calls`)."""
        return _calls_through_tables(self)

    @cached_property
    def _calls_by_name(self) -> dict[str | None, list[ast.Call]]:
        table: dict[str | None, list[ast.Call]] = {}
        for call in self.calls:
            table.setdefault(call_name(call), []).append(call)
        return table

    @cached_property
    def _calls_by_qualname(self) -> dict[str | None, list[ast.Call]]:
        table: dict[str | None, list[ast.Call]] = {}
        for call in self.calls:
            table.setdefault(self.call_qualname(call), []).append(call)
        return table

    def iter_calls(self, *method_names: str) -> list[ast.Call]:
        """Calls of `f(...)` / `obj.f(...)` for these names, in source order (from an index)."""
        found = [call for name in method_names for call in self._calls_by_name.get(name, ())]
        if len(method_names) > 1:
            found.sort(key=_position)
        return found

    def calls_to(self, *qualnames: str) -> list[ast.Call]:
        """Calls whose function resolves to one of these qualified names, in source order."""
        found = [call for name in qualnames for call in self._calls_by_qualname.get(name, ())]
        if len(qualnames) > 1:
            found.sort(key=_position)
        return found

    def backward_call_list(self) -> list[ast.Call]:
        ids = self._backward_call_ids
        return [c for c in self.iter_calls("backward", "manual_backward") if id(c) in ids] + self.calls_to(
            "torch.autograd.backward")


@dataclass(frozen=True)
class ModeSwitch:
    name: str
    mode: str  # "eval" | "train"
    call: ast.Call


def _mode_of(call: ast.Call) -> str | None:
    """"eval" or "train" for `.eval()`, `.train()`, `.train(False)`, `.train(mode=True)`."""
    if call.func.attr == "eval":
        return "eval" if not call.args and not call.keywords else None
    value = call.args[0] if call.args else (call.keywords[0].value if call.keywords else None)
    if value is None:
        return "train"
    if isinstance(value, ast.Constant) and isinstance(value.value, bool):
        return "train" if value.value else "eval"
    return None


def _base_name(node: ast.AST) -> str | None:
    """`model` in `model`, `model.to(device)`, `model.cuda()` (chains of calls on a name), and
    `model.module` (the network a DDP wrapper holds: switching its mode switches the model's)."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        node = node.func.value
    if isinstance(node, ast.Attribute) and node.attr == "module":
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _star_import_brings_torch(body: list[ast.stmt]) -> bool:
    """`from build_utils.utils import *` in a module that also imports from PyTorch or a
    library built on it at the top (`from torch.cuda import amp`, `from torchvision import
    models` beside `from torch_snippets import *`) and uses `torch` without importing it: the
    star import is where `torch` comes from (the module's `@torch.no_grad()` runs).  Only
    top-level imports are read, which every part of the file holds (`rule_parts`)."""
    star = torch_import = False
    for statement in body:
        if statement.__class__ is ast.ImportFrom:
            star = star or any(alias.name == "*" for alias in statement.names)
            torch_import = torch_import or (statement.level == 0 and is_torch_ecosystem_module(statement.module or ""))
        elif statement.__class__ is ast.Import:
            torch_import = torch_import or any(is_torch_ecosystem_module(alias.name) for alias in statement.names)
    return star and torch_import


def _import_bindings(statement: ast.stmt) -> dict[str, str]:
    """The names the imports in one top-level statement bind (at any depth), in the order a
    depth-first stack walk meets them (a later binding of a name wins)."""
    imports: dict[str, str] = {}
    stack = [statement]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    imports[alias.asname] = alias.name
                else:
                    root = alias.name.split(".")[0]
                    imports[root] = root
        elif isinstance(node, ast.ImportFrom):
            # A relative import keeps its dots (`from .utils import f` -> ".utils.f"):
            # the workspace resolver finds it from the importing file's folder.
            prefix = "." * node.level + (f"{node.module}." if node.module else "")
            if node.module or node.level:
                for alias in node.names:
                    if alias.name != "*":
                        imports[alias.asname or alias.name] = prefix + alias.name
        else:
            for name in BLOCK_FIELDS:
                for child in getattr(node, name, ()):
                    stack.append(child)
    return imports


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass
class _DefWalk:
    """What the walk of one top-level `def` or `class` handed out, and what it read beyond it."""

    imports: tuple  # the file's imports, (name, qualname) items
    wrapper_answers: tuple  # (decorator or `with` item, as a context, the `WrapperUse` or None)
    contexts: list  # (statement or call, its `Context`, None for the module's), in the order handed out
    statements: list  # every statement it handed out, in walk order
    module_statements: list  # those at module level, in that order
    calls: list  # every call, in walk order
    module_calls: list  # those at module level
    functions: list  # the `FunctionInfo` of each def in it
    loops: list
    classes: list  # the classes among its statements


_DEF_WALK: FactKey["_DefWalk | None"] = FactKey("analysis.def_walk")


def _same_wrapper(now, then) -> bool:
    """Two answers about a project grad-off wrapper say the same (None, or an equal `WrapperUse`)."""
    return now is then or now == then


_PLAIN_ASSIGNMENTS: FactKey[tuple[tuple[str, ast.AST], ...]] = FactKey("plain names a statement assigns, with the values")


def _plain_assignments(nodes) -> tuple[tuple[str, ast.AST], ...]:
    """(name, value) of every `name = value` in one top-level statement, at any depth."""
    return tuple((target.id, assign.value) for assign in nodes.nodes(ast.Assign) for target in assign.targets
                 if isinstance(target, ast.Name))


def is_backward_call(analysis: Analysis, call: ast.Call) -> bool:
    """`x.backward()`, `self.manual_backward(loss)`, `torch.autograd.backward(...)` (however
    imported).  Asked of every call: a method call other than these ends in another name,
    so only a plain name (`from torch.autograd import backward`) needs the imports."""
    func = call.func
    if type(func) is ast.Attribute:
        return func.attr in ("backward", "manual_backward")
    return type(func) is ast.Name and analysis.call_qualname(call) == "torch.autograd.backward"


def is_self_update(stmt: ast.stmt, name: str) -> bool:
    """`total = total + loss`, `ema = 0.9 * ema + 0.1 * loss`: an update, not a fresh binding."""
    if not (isinstance(stmt, ast.Assign) and isinstance(stmt.value, (ast.BinOp, ast.IfExp))):
        return False
    if isinstance(stmt.value, ast.BinOp) and any(isinstance(n, ast.Name) and n.id == name
                                                 for n in (stmt.value.left, stmt.value.right)):
        return True
    found = accumulation(stmt)
    return found is not None and isinstance(found[0], ast.Name) and found[0].id == name


def _is_false(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is False


def _guarded(ctx: Context, stmt: ast.If, in_body: bool) -> Context:
    return Context(ctx.function, ctx.loops, ctx.grad_disabled, ctx.guards + ((stmt, in_body),), ctx.with_items)


def is_torch_ecosystem_module(module: str) -> bool:
    """`torch.nn`, `timm.models`: a module of PyTorch or a library built on it (not the project's)."""
    return module.split(".")[0] in _TORCH_ECOSYSTEM


def analyze(source: str, path: str | None = None, torch_version: tuple[int, int] | None = None,
            previous: ParsedVersion | None = None) -> Analysis:
    return Analysis(source, path, torch_version, previous)


def part_analysis(whole: Analysis, statements: list[ast.stmt]) -> Analysis:
    """The analysis of a file holding only `statements`, top-level statements of `whole`,
    at their places in its text: what the rules see of one independent part of a file
    (`torch_lsp.rule_parts`)."""
    return Analysis(whole.source, whole.path, whole.torch_version, part_of=whole, statements=statements)


_FRAMEWORK_CONSTRUCTORS = ("lightning.Fabric", "lightning.fabric.Fabric", "lightning_fabric.Fabric",
                            "accelerate.Accelerator")


def _framework_places_on_accelerator(analysis: Analysis) -> bool:
    frameworks = [call for call in analysis.calls_to(*_FRAMEWORK_CONSTRUCTORS) if not _asks_for_cpu(call)]
    return bool(frameworks) and bool(
        analysis.iter_calls("setup", "setup_module", "setup_dataloaders", "prepare", "to_device"))


def _moves(analysis: Analysis, batches_only: bool) -> bool:
    return any(analysis._moves_to_device(call, batches_only) for call in analysis.iter_calls("cuda", "to"))


def _asks_for_cpu(call: ast.Call) -> bool:
    for kw in call.keywords:
        if isinstance(kw.value, ast.Constant) and (
                (kw.arg == "accelerator" and kw.value.value == "cpu") or (kw.arg == "cpu" and kw.value.value is True)):
            return True
    return False


def _is_accelerator_device(analysis: "Analysis", call: ast.Call) -> bool:
    device = argument(call, 0, "device")
    if isinstance(device, ast.Constant):
        return isinstance(device.value, str) and device.value.split(":")[0] in ("cuda", "mps", "xpu")
    if isinstance(device, ast.Name):
        roles = analysis.roles_for(call)
        if not roles.is_device(device.id):
            return False
        return not _only_cpu(analysis, device.id)
    if isinstance(device, ast.Attribute):
        return device.attr in ("device", "DEVICE") or "device" in device.attr.lower()
    if isinstance(device, ast.Call):
        return analysis.call_qualname(device) == "torch.device"
    return False


def _only_cpu(analysis: "Analysis", name: str) -> bool:
    """Every assignment of `name` in the file is the literal "cpu" (anywhere in the file, in
    any function: a fact of the whole file)."""
    return analysis.file_fact(("only cpu", name), partial(_assigned_only_cpu, name=name))


def _assigned_only_cpu(analysis: "Analysis", name: str) -> bool:
    values = analysis.assigned_values.get(name, [])
    return bool(values) and all(is_cpu_device(analysis, v) for v in values)


def is_cpu_device(analysis: "Analysis", value: ast.AST) -> bool:
    """`"cpu"` or `torch.device("cpu")`."""
    if isinstance(value, ast.Call) and analysis.call_qualname(value) == "torch.device" and value.args:
        value = value.args[0]
    return isinstance(value, ast.Constant) and value.value == "cpu"


# -------------------------------------------- evaluation: which calls evaluate a model
_EVAL_WORDS = ("eval", "valid", "test", "predict", "infer")
# Adversarial attacks take gradients of the loss with respect to the input, through the model,
# inside what runs them (advertorch's `adversary.perturb(x, y)`, torchattacks' `atk(images,
# labels)`, a project's `pgd_attack(model, x, y)`): words of the called function's name, and of
# the object it is called on.  Not "adv" or "adversarial": a GAN's `adversarial_loss(d_out,
# valid)` attacks nothing, and `adv_images.clone()` is the attack's data.
_ATTACK_WORDS = frozenset({"attack", "attacker", "atk", "adversary", "autoattack"})
_ATTACK_FUNCTION_WORDS = _ATTACK_WORDS | {"perturb", "pgd", "fgsm"}
# Splits an identifier into its words: `pgd_attack`, `runAttack`, `PGDAttack2`.
IDENTIFIER_WORDS = re.compile(r"_+|(?<=[a-z0-9])(?=[A-Z])")


def runs_an_attack(call: ast.Call) -> bool:
    """`call` runs an adversarial attack, by its name or its receiver's (`adversary.perturb(x, y)`,
    `atk(images, labels)`, `pgd_attack(model, x, y)`): it differentiates through the model, so
    the code around it needs autograd on."""
    func = call.func
    if isinstance(func, ast.Name):
        return _has_word(func.id, _ATTACK_FUNCTION_WORDS)
    if not isinstance(func, ast.Attribute):
        return False
    return _has_word(func.attr, _ATTACK_FUNCTION_WORDS) or (
        isinstance(func.value, ast.Name) and _has_word(func.value.id, _ATTACK_WORDS))


def _has_word(identifier: str, words: frozenset[str]) -> bool:
    return any(word.lower() in words for word in IDENTIFIER_WORDS.split(identifier) if word)


def named_for_evaluation(function: FunctionInfo) -> bool:
    """`validate`, `evaluate_model`, `runTest`: the name says the function evaluates."""
    words = re.split(r"_+|(?<=[a-z])(?=[A-Z])", function.name.lower())
    return any(word.startswith(_EVAL_WORDS) for word in words if word)


def is_pytest_test(analysis: Analysis, function: FunctionInfo, model: str | None = None) -> bool:
    """A pytest test function (in a test file, or one that builds the model it runs)."""
    if not function.name.startswith("test"):
        return False
    return analysis.is_test_file or (model is not None and model not in function.params)


def is_test_method(analysis: Analysis, function: FunctionInfo) -> bool:
    """A method of a test class: `test*` in a class pytest or unittest collects (`TestGPTModel`,
    a `unittest.TestCase`), or any method of one in a test file (its helpers serve the tests);
    in a test file also any `test_*` method.  A trainer's own `def test(self)` or a `Tester`
    class in a training script is none."""
    name, cls = function.name, function.class_node
    if cls is None:
        return False
    if _TEST_CLASS.match(cls.name) or any(_last_name(base) == "TestCase" for base in cls.bases):
        return name.startswith("test") or analysis.is_test_file
    return analysis.is_test_file and name.startswith("test_")


_TEST_CLASS = re.compile(r"Test(?:[A-Z0-9_]|$)")


def _last_name(base: ast.expr) -> str | None:
    """`TestCase` of `unittest.TestCase` or `TestCase`."""
    return base.attr if isinstance(base, ast.Attribute) else base.id if isinstance(base, ast.Name) else None


# Lightning's hooks: its trainer puts the model in the mode each one needs before calling it.
LIGHTNING_STEPS = ("training_step", "validation_step", "test_step", "predict_step")


def evaluation_model_calls(analysis: Analysis) -> Iterator[tuple[FunctionInfo, ast.Call, str]]:
    """(function, its first call of the model, model) for each model run where the run may be
    an evaluation: in a function or at module level, not in a method, a Lightning step, a
    pytest test or code that computes gradients, and not a layer visited one by one.  TL103
    and TL302 decide from there whether it is one."""
    for function in analysis.functions:
        if function.is_method or analysis.computes_gradients(function):
            continue
        if function.name in LIGHTNING_STEPS or _handed_over(analysis, function):
            continue
        roles = analysis.roles_for(function)
        seen: set[str] = set()
        for call in function.calls:
            model = roles.model_name(call)
            if model and model not in seen and not is_pytest_test(analysis, function, model):
                if _output_discarded(analysis, function, call):
                    continue  # evaluates nothing: a later run of the model in the function may
                context = analysis.context(call)
                if not context.grad_disabled and any(analysis.steps_through_helper(loop) for loop in context.loops):
                    continue  # the forward of a training step whose backward is in a helper (`optimizer_step(loss, ...)`)
                seen.add(model)
                if _iterated_submodule(roles, model, call) or _fed_host_arrays(analysis, call):
                    continue
                yield function, call, model


def _handed_over(analysis: Analysis, function: FunctionInfo) -> bool:
    """The function is never called here but handed to a call (`inference_func` given to a test
    harness, a `predict_fn` given to a tracer): whoever calls it sets the mode and the grad
    context (detectron2's export tests run it inside an adapter under `eval()` and `no_grad`).
    Not one that switches a model to eval itself: it evaluates on its own account, nor one
    handed to an executor with its arguments (`pool.submit(predict, model, x)`, `launches`):
    that is a call whose arguments the file shows."""
    if function.is_module or analysis.callers(function) or analysis.launches(function):
        return False
    if any(switch.mode == "eval" for switch in analysis.mode_switches.get(function, ())):
        return False  # it sets the mode itself (`facenet.eval()`, then a `pool.map` worker): no caller does
    index = syntax_index(analysis)
    for name in index.names(function.name):
        parent = index.parent_of(name)
        if isinstance(parent, ast.keyword):
            parent = index.parent_of(parent)
        if isinstance(parent, ast.Call) and parent.func is not name and isinstance(name.ctx, ast.Load):
            return True
    return False


def _output_discarded(analysis: Analysis, function: FunctionInfo, call: ast.Call) -> bool:
    """`model(batch)` as a statement, or bound to names nothing reads: a forward whose output
    nobody looks at evaluates nothing (a dry run that initialises lazy layers before the
    optimizer is built, a warm-up).  Not where the file registers forward hooks (the run feeds
    features to them) or IPython displays the value (a notebook cell's last expression)."""
    statement = analysis.statement_of(call)
    if isinstance(statement, ast.Expr) and statement.value is call:
        if shown_as_cell_output(analysis, statement):
            return False
    elif isinstance(statement, ast.Assign) and statement.value is call:
        names = [target.id for target in statement.targets if isinstance(target, ast.Name)]
        if len(names) != len(statement.targets) or any(_read_in(analysis, function, n) for n in names):
            return False
    else:
        return False
    index = syntax_index(analysis)
    return not any(index.attributes_named(hook) for hook in _FORWARD_HOOKS)


_FORWARD_HOOKS = ("register_forward_hook", "register_forward_pre_hook", "register_module_forward_hook")


def _read_in(analysis: Analysis, function: FunctionInfo, name: str) -> bool:
    """`name` is read in the function, or in a nested function that does not bind its own."""
    for read in syntax_index(analysis).names_in(name, function.node):
        if not isinstance(read.ctx, ast.Load):
            continue
        inner = analysis.context(read).function
        if inner.node is not function.node and (name in inner.params or name in analysis.roles_for(inner).assignments):
            continue
        return True
    return False


def _fed_host_arrays(analysis: Analysis, call: ast.Call) -> bool:
    """`isp_model.forward(img.copy(), hq)`, `model(np.stack(frames))`: the first input is a NumPy
    array (`.copy()` is no tensor method), so what runs is no torch module: an ISP simulator,
    a scikit-learn estimator."""
    first = call.args[0] if call.args else None
    if not isinstance(first, ast.Call):
        return False
    if isinstance(first.func, ast.Attribute) and first.func.attr == "copy" and not first.args:
        return True
    return (analysis.call_qualname(first) or "").startswith("numpy.")


def name_says_evaluation(analysis: Analysis, function: FunctionInfo, model: str) -> bool:
    """A `validate`/`evaluate`/`predict`-style function that receives the model.  A helper nested
    in another function and called only there is a piece of that function, whose name decides
    (NeRF's `inference(model, ...)` inside `render_rays`, which training calls too)."""
    return (
        not function.is_module
        and named_for_evaluation(function)
        and model in function.params
        and not is_pytest_test(analysis, function)
        and not _piece_of_a_function_not_named_for_evaluation(analysis, function)
    )


def _piece_of_a_function_not_named_for_evaluation(analysis: Analysis, function: FunctionInfo) -> bool:
    enclosing = analysis.context(function.node).function
    if enclosing.is_module or function.class_node is not None:
        return False
    sites = analysis.callers(function)
    return bool(sites) and all(_inside(analysis, site, enclosing) for site in sites) \
        and not named_for_evaluation(enclosing)


def _inside(analysis: Analysis, node: ast.AST, function: FunctionInfo) -> bool:
    """`node` sits in `function`'s body, also in a function nested there."""
    scope = analysis.context(node).function
    while not scope.is_module:
        if scope is function:
            return True
        scope = analysis.context(scope.node).function
    return False


def eval_switch_before(analysis: Analysis, function: FunctionInfo, call: ast.Call) -> str | None:
    """The model put in eval mode before `call` in this function (and not back in train)."""
    last = None
    for switch in analysis.mode_switches.get(function, ()):
        if (switch.call.lineno, switch.call.col_offset) < (call.lineno, call.col_offset):
            last = switch if switch.mode == "eval" else (None if last and last.name == switch.name else last)
    return last.name if last else None


def switched_to_eval_before(analysis: Analysis, function: FunctionInfo, call: ast.Call, model: str) -> bool:
    """`model` itself is put in eval mode before `call` in this function and not back in train:
    another model switched after it (`image_encoder.eval()`, then `text_encoder.eval()`) does not
    hide its own switch, as it does for `eval_switch_before`."""
    at = (call.lineno, call.col_offset)
    before = [s for s in analysis.mode_switches.get(function, ()) if s.name == model
              and (s.call.lineno, s.call.col_offset) < at]
    return bool(before) and max(before, key=lambda s: (s.call.lineno, s.call.col_offset)).mode == "eval"


def in_eval_mode(analysis: Analysis, function: FunctionInfo, call: ast.Call, model: str,
                 _outer: frozenset = frozenset()) -> bool:
    """`model` is switched to eval in this function, at module level, or by every caller
    (also a caller that passes its own parameter on and is itself called only that way), or a
    function of the file called on it earlier here left it in eval mode (`test(encoder, data)`
    ending each epoch, then a last pass over the data under `no_grad`)."""
    if analysis.switched(function, model, "eval") or analysis.switched(function, model, "train"):
        return True
    if mode_left_before(analysis, function, call, model) == "eval":
        return True
    if model not in function.params and analysis.switched(analysis.module_scope, model, "eval"):
        return True
    if _wraps_evaluated_model(analysis, function, model, call) or _in_library_eval_block(analysis, call, model):
        return True
    # A recursive call handing the model on keeps the mode the outer callers set; a function
    # handed to an executor runs in the mode its launcher left the model in.
    callers = [site for site in analysis.callers(function) + analysis.launches(function)
               if not _hands_on_recursively(analysis, function, site, model)]
    if callers and model in function.params:
        outer = _outer | {id(function)}
        return all(_caller_evaluates(analysis, function, site, model, outer) for site in callers)
    return False


def _in_library_eval_block(analysis: Analysis, call: ast.Call, model: str) -> bool:
    """`call` runs inside `with eval_mode(model):` (MONAI), which puts `model` in eval mode for the block."""
    node = analysis.statement_of(call)
    while node is not None and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
        if isinstance(node, (ast.With, ast.AsyncWith)) and any(
                isinstance(item.context_expr, ast.Call) and analysis.call_qualname(item.context_expr) in _LIBRARY_EVAL_CONTEXTS
                and any(isinstance(a, ast.Name) and a.id == model for a in item.context_expr.args)
                for item in node.items):
            return True
        node = analysis.parents.get(node)
    return False


def _launches(call: ast.Call, function: FunctionInfo) -> bool:
    """`call` is `<executor>.submit(function, ...)`."""
    return (isinstance(call.func, ast.Attribute) and call.func.attr == "submit" and bool(call.args)
            and isinstance(call.args[0], ast.Name) and call.args[0].id == function.name)


def _hands_on_recursively(analysis: Analysis, function: FunctionInfo, site: ast.Call, param: str) -> bool:
    """`site` is the function calling itself with its own `param` for that parameter."""
    arg = analysis.argument_for(site, function, param)
    return analysis.context(site).function is function and isinstance(arg, ast.Name) and arg.id == param


def switches_to_eval(analysis: Analysis, call: ast.Call, model: str) -> bool:
    """`call` puts `model` in eval mode: `model.eval()`, or a local function given `model` for a
    parameter it calls `.eval()` on."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == "eval":
        target = func.value
        if isinstance(target, ast.Attribute) and target.attr == "module":
            target = target.value  # `model.module.eval()`
        if isinstance(target, ast.Name):
            return target.id == model
    for function in analysis.function_named(call_name(call) or ""):
        for param in function.params:
            arg = analysis.argument_for(call, function, param)
            if isinstance(arg, ast.Name) and arg.id == model and analysis.switched(function, param, "eval"):
                return True
    return False


_SUBMODULE_ITERATORS = {"children", "named_children", "modules", "named_modules"}


def _iterated_submodule(roles: ScopeRoles, name: str, call: ast.Call) -> bool:
    """`for _, module in model.named_children(): module(...)`: a layer visited one by one
    (weight conversion, calibration), whose mode is its model's business, not an evaluation."""
    assignment = roles.last_assignment(name, call)
    if assignment is None or not isinstance(assignment.statement, (ast.For, ast.AsyncFor)):
        return False
    source = assignment.statement.iter
    return isinstance(source, ast.Call) and isinstance(source.func, ast.Attribute) \
        and source.func.attr in _SUBMODULE_ITERATORS


def _wraps_evaluated_model(analysis: Analysis, function: FunctionInfo, model: str, call: ast.Call) -> bool:
    """`compiled = torch.compile(model)` after `model.eval()`: the wrapper shares the mode.
    A name the function only reads is the enclosing scope's (a closure's `net`, bound to
    `load_net()` before the `def`): that binding decides."""
    roles = analysis.roles_for(function)
    assignment = roles.last_assignment(model, call)
    if assignment is None and not function.is_module and model not in function.params \
            and not roles.assignments.get(model):
        return _wraps_evaluated_model(analysis, analysis.context(function.node).function, model, function.node)
    if assignment is not None and isinstance(assignment.value, ast.Subscript) \
            and isinstance(assignment.value.value, ast.Name):
        # `model = models[0]` after `for model in models: model.cuda().eval()` (fairseq's ensembles)
        return _each_evaluated_in_loop(analysis, function, assignment.value.value.id, assignment.statement)
    if assignment is None or not isinstance(assignment.value, ast.Call):
        return False
    value = assignment.value
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in ("to", "cuda", "eval"):
        if value.func.attr == "eval":
            return True
        value = value.func.value
    if isinstance(value, ast.Name) and value is not assignment.value:
        # `model = model.to(DEVICE)` after `model, dictionary = load_model_dict()`: a move keeps
        # the mode the earlier binding (strictly before this one) left it in.
        return _wraps_evaluated_model(analysis, function, value.id, assignment.value)
    if isinstance(value, ast.Call):
        if any(isinstance(a, ast.Name) and analysis.switched(function, a.id, "eval") for a in value.args):
            return True
        # `model = TracedModel(model, ...)` after `model = attempt_load(...)`: the wrapper runs
        # what an earlier binding loaded in eval mode (that binding sits strictly earlier).
        if any(isinstance(a, ast.Name) and _wraps_evaluated_model(analysis, function, a.id, value)
               for a in value.args[:1]):
            return True
        index = _unpacked_index(assignment.statement, model) if assignment.unpacked else None
        if assignment.unpacked and index is None:
            return False
        for owner, loader in functions_called(analysis, value):
            if any(_returns_evaluated(owner, loader, r, index) for r in walk_nodes(loader.node)
                   if isinstance(r, ast.Return)):
                return True
    return False


def _each_evaluated_in_loop(analysis: Analysis, function: FunctionInfo, sequence: str, before: ast.stmt) -> bool:
    """A loop over `sequence` earlier in the function puts each item in eval mode (`for model
    in models: model.cuda().eval()`) and none back in train mode."""
    for loop in walk_nodes(function.node):
        if not (isinstance(loop, ast.For) and isinstance(loop.iter, ast.Name) and loop.iter.id == sequence
                and isinstance(loop.target, ast.Name) and _position(loop) < _position(before)):
            continue
        modes = [mode_of_chain(call) for stmt in loop.body for call in walk_nodes(stmt)
                 if isinstance(call, ast.Call) and _base_name(call.func.value if isinstance(call.func, ast.Attribute)
                                                               else call.func) == loop.target.id]
        if "eval" in modes and "train" not in modes:
            return True
    return False


def mode_of_chain(call: ast.Call) -> str | None:
    """"eval" / "train" when `call` is a mode switch (`m.cuda().eval()`, `m.train()`), else None."""
    if isinstance(call.func, ast.Attribute) and call.func.attr in ("eval", "train"):
        return _mode_of(call)
    return None


def _unpacked_index(statement: ast.stmt, name: str) -> int | None:
    """`ours, hf_model = build_pair(...)`: the place of `name` in the one flat tuple target."""
    targets = getattr(statement, "targets", ())
    if len(targets) != 1 or not isinstance(targets[0], (ast.Tuple, ast.List)):
        return None
    names = [e.id if isinstance(e, ast.Name) else None for e in targets[0].elts]
    return names.index(name) if name in names else None


def functions_called(analysis: Analysis, call: ast.Call) -> list[tuple[Analysis, FunctionInfo]]:
    """The functions `call` may run, with the analysis of their file: those of this file so
    named, else the function imported from a project file (`from utils import load_model`,
    whose `model.eval()` before `return model` decides the mode of what it hands back)."""
    local = analysis.function_named(call_name(call) or "")
    if local:
        return [(analysis, f) for f in analysis.top_level_definition_run(local, call)]
    from torch_lsp.workspace_files import project_definition

    found = project_definition(analysis, call.func)
    if found is None or not isinstance(found[1], ast.FunctionDef):
        return []
    owner, node = found
    return [(owner, f) for f in owner.functions if f.node is node]


def _returns_evaluated(analysis: Analysis, function: FunctionInfo, ret: ast.Return, index: int | None = None) -> bool:
    """`return model.eval()`, or `return model` after `model.eval()`; with `index`, that
    element of a returned tuple (`return ours, hf_model` after both are switched)."""
    value = ret.value
    if index is not None:
        if not (isinstance(value, (ast.Tuple, ast.List)) and index < len(value.elts)):
            return False
        value = value.elts[index]
    if _ends_in_eval(value):
        return True
    if isinstance(value, ast.Subscript):
        value = value.value  # `return ensemble[-1]`: one of the models the loader gathered
        return isinstance(value, ast.Name) and _gathers_only_evaluated(function, value.id)
    return isinstance(value, ast.Name) and (
        bool(analysis.switched(function, value.id, "eval")) or _gathers_only_evaluated(function, value.id))


def _ends_in_eval(value: ast.AST | None) -> bool:
    """`model.to(device).eval()`, `ckpt["model"].float().eval()`: a chain whose last switch is eval."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        if value.func.attr == "eval":
            return True
        value = value.func.value
    return False


def _gathers_only_evaluated(function: FunctionInfo, name: str) -> bool:
    """`ensemble.append(ckpt["model"].float().fuse().eval())` for every model the function adds
    to `name` (a list or an `nn.ModuleList` of checkpoints): what it holds is in eval mode."""
    added = [call.args[0] for call in function.calls
             if isinstance(call.func, ast.Attribute) and call.func.attr == "append" and len(call.args) == 1
             and isinstance(call.func.value, ast.Name) and call.func.value.id == name]
    return bool(added) and all(_ends_in_eval(value) for value in added)


def _caller_evaluates(analysis: Analysis, function: FunctionInfo, site: ast.Call, param: str,
                     outer: frozenset) -> bool:
    arg = analysis.argument_for(site, function, param)
    if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr == "eval":
        return True
    if isinstance(arg, ast.Attribute) and last_switch_before(analysis.context(site).function, site, dotted(arg)) == "eval":
        return True  # `self.GAN.eval()`, then `generate(self.GAN.G, ...)`: a submodule shares the mode
    if isinstance(arg, ast.Subscript) and isinstance(arg.value, ast.Name):  # `do_sampling(models[0], ...)`
        owner = analysis.context(site).function
        return _each_evaluated_in_loop(analysis, owner, arg.value.id, analysis.statement_of(site))
    if is_self_attribute(arg):
        # `get_flow(self.flow_model, imgs)`: every binding of the attribute in the caller's class
        # is a model in eval mode (`flow_model.eval()`, then `self.flow_model = flow_model`) and no
        # method of the class puts it back in train mode
        cls = analysis.context(site).function.class_node
        return cls is not None and attribute_loaded_in_eval_mode(analysis, cls, arg.attr) and not any(
            isinstance(call.func, ast.Attribute) and call.func.attr == "train"
            and is_self_attribute_named(call.func.value, arg.attr)
            for f in analysis.functions if f.class_node is cls for call in f.calls)
    if isinstance(arg, ast.Name):
        owner = analysis.context(site).function
        if analysis.switched(owner, arg.id, "eval") or mode_left_before(analysis, owner, site, arg.id) == "eval":
            return True
        # `benchmark(model)` passing its own parameter on: what its callers pass decides.
        return id(owner) not in outer and not analysis.switched(owner, arg.id, "train") \
            and in_eval_mode(analysis, owner, site, arg.id, outer)
    return False


def last_switch_before(function: FunctionInfo, site: ast.Call, chain: str | None) -> str | None:
    """"eval" / "train": the last mode switch, in `function` before `site`, of the module the
    dotted name `chain` names (`self.GAN.G`, `rf.model`) or of one holding it (`self.GAN.eval()`
    switches every submodule); None when there is none."""
    if chain is None:
        return None
    last, where = None, (site.lineno, site.col_offset)
    for call in function.calls:
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr in ("eval", "train")
                and (call.lineno, call.col_offset) < where):
            continue
        target = dotted(func.value)
        if target is not None and (chain == target or chain.startswith(target + ".")):
            if last is None or (call.lineno, call.col_offset) > (last.lineno, last.col_offset):
                last = call
    return None if last is None else _mode_of(last)


def arrives_in_eval_mode(value: ast.AST) -> bool:
    """`AutoModel.from_pretrained(...)` or `model.eval()` (through `.to(...)`-style chains):
    the value is a model in eval mode; the last mode call of the chain decides."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        if value.func.attr in ("from_pretrained", "eval"):
            return True
        if value.func.attr == "train":
            return False
        value = value.func.value
    return False


# Loaders that return the model (first of a tuple) already in eval mode: openai/CLIP's `load`
# ends in `build_model(...)`, which returns `model.eval()` (the TorchScript path calls `.eval()`).
_EVAL_MODE_LOADERS = ("clip.load",)


def attribute_loaded_in_eval_mode(analysis: Analysis, cls: ast.ClassDef, attr: str) -> bool:
    """Every binding of `self.<attr>` in the class is a model loaded in eval mode:
    `self.model = AutoModel.from_pretrained(...)`, `self.model, self.preprocess =
    clip.load(...)` (the model is the loader's first result), or a local the method has put
    in eval mode before (`model.eval()`, then `self.model = model`: fairseq's feature readers).
    A binding in train mode counts as evaluated when a later statement of the same block puts
    the attribute itself in eval mode (`self.model = Net()`, then `self.model =
    self.model.to(device).eval()`); wrapping it (`torch.jit.script(self.model)`) keeps its mode."""
    bindings = 0
    for function in analysis.functions:
        if function.class_node is not cls:
            continue
        untrained: list[ast.stmt] = []  # bindings in train mode, unless a later one in their block evaluates it
        for stmt in function.statements:
            if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) and is_self_attribute_named(stmt.target, attr):
                return False  # `self.model: nn.Module = Net()`: built here, in train mode
            if not isinstance(stmt, ast.Assign):
                continue
            for target in stmt.targets:
                if is_self_attribute_named(target, attr):
                    moved = unmoved(stmt.value)
                    if is_self_attribute_named(moved, attr) and moved is not stmt.value:
                        continue  # `self.model = self.model.half()`: a move keeps the mode
                    if _wraps_self_attribute(analysis, stmt.value, attr):
                        continue  # `self.model = torch.jit.script(self.model)`: the wrapper keeps the mode
                    if arrives_in_eval_mode(stmt.value) and _chain_root_is_self_attribute(stmt.value, attr):
                        # `self.model = self.model.to(device).eval()`: what the block bound before is evaluated
                        untrained = [u for u in untrained if not _same_block(analysis, u, stmt)]
                        bindings += 1
                        continue
                    if not (arrives_in_eval_mode(stmt.value) or isinstance(moved, ast.Name)
                            and mode_left_before(analysis, function, stmt, moved.id) == "eval"
                            or _method_returns_evaluated(analysis, cls, stmt.value, None)):
                        untrained.append(stmt)
                        continue
                    bindings += 1
                elif isinstance(target, ast.Tuple) and any(is_self_attribute_named(e, attr) for e in target.elts):
                    index = next(i for i, e in enumerate(target.elts) if is_self_attribute_named(e, attr))
                    if not (index == 0 and isinstance(stmt.value, ast.Call)
                            and analysis.call_qualname(stmt.value) in _EVAL_MODE_LOADERS
                            or _method_returns_evaluated(analysis, cls, stmt.value, index)):
                        return False
                    bindings += 1
        if untrained:
            return False
    return bindings > 0


def _wraps_self_attribute(analysis: Analysis, value: ast.AST, attr: str) -> bool:
    """`torch.jit.script(self.<attr>)`, `torch.compile(...)`, `DDP(self.<attr>.cuda())`: a
    wrapper of the attribute's module, which runs it in the mode it is in."""
    from torch_lsp.roles import MODEL_WRAPPERS

    return (isinstance(value, ast.Call) and bool(value.args)
            and analysis.call_qualname(value) in MODEL_WRAPPERS | {"torch.jit.freeze"}
            and is_self_attribute_named(unmoved(value.args[0]), attr))


def _chain_root_is_self_attribute(value: ast.AST, attr: str) -> bool:
    """`self.<attr>.to(device).eval()`: a chain of method calls on the attribute itself."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        value = value.func.value
    return is_self_attribute_named(value, attr)


def _same_block(analysis: Analysis, first: ast.stmt, later: ast.stmt) -> bool:
    """The two statements are in one statement list (a later one there runs whenever the first did)."""
    parent = analysis.parents.get(first)
    if parent is None or analysis.parents.get(later) is not parent:
        return False
    for field in ("body", "orelse", "finalbody"):
        block = getattr(parent, field, None)
        if isinstance(block, list) and first in block:
            return later in block
    return False


def _method_returns_evaluated(analysis: Analysis, cls: ast.ClassDef, value: ast.AST, index: int | None) -> bool:
    """`self.seg_model, self.cls_model = self.init_models()`: a method of the class whose every
    `return` hands back (at `index` of its tuple) a model it put in eval mode and never back in
    train mode (`seg_model.eval()` ... `return seg_model, cls_model`)."""
    if not (isinstance(value, ast.Call) and is_self_attribute(value.func)):
        return False
    methods = [f for f in analysis.functions if f.class_node is cls and f.name == value.func.attr]
    if len(methods) != 1:
        return False
    method = methods[0]
    returns = [r for r in walk_nodes(method.node) if isinstance(r, ast.Return)]
    if not returns or not all(_returns_evaluated(analysis, method, r, index) for r in returns):
        return False
    returned = [r.value.elts[index] if index is not None else r.value for r in returns]
    return not any(isinstance(v, ast.Name) and analysis.switched(method, v.id, "train") for v in returned)


def mode_left_before(analysis: Analysis, owner: FunctionInfo, site: ast.AST, name: str) -> str | None:
    """The mode `name` is left in by the last call before `site` in `owner` that sets it:
    `name.eval()` / `name.train()`, or a call of a function of the file that switches the
    parameter it passes `name` to (`evaluate(loader, model)` whose last switch is
    `model.eval()`).  None when no call before `site` sets it."""
    last = None
    for call in owner.calls:
        if _position(call) >= _position(site):
            break
        direct = next((s.mode for s in analysis.mode_switches.get(owner, ()) if s.call is call and s.name == name), None)
        left = direct or _mode_a_call_leaves(analysis, call, name)
        if left is not None:
            last = left
    return last


def _mode_a_call_leaves(analysis: Analysis, call: ast.Call, name: str) -> str | None:
    """`evaluate(loader, model)`: the mode the one function of the file so named leaves the
    parameter `name` is passed to (its last switch of it), else None."""
    if not isinstance(call.func, ast.Name):
        return None
    callees = analysis.function_named(call.func.id)
    if len(callees) != 1 or callees[0].is_method:
        return None
    callee = callees[0]
    for param in callee.params:
        passed = analysis.argument_for(call, callee, param)
        if isinstance(passed, ast.Name) and passed.id == name:
            switches = [s for s in analysis.mode_switches.get(callee, ()) if s.name == param]
            return max(switches, key=lambda s: _position(s.call)).mode if switches else None
    return None


# ------------------------------------------------ device guards: code that only runs on CUDA
_CUDA_FLAG = re.compile(r"(?:^|_)cuda$", re.IGNORECASE)


def under_cuda_guard(analysis: Analysis, node: ast.AST) -> bool:
    """`node` only runs when CUDA is in use: inside `if device.type == "cuda":` (or
    `if device == "cuda":`),
    `if torch.cuda.is_available():`, `if args.cuda:`, `if cuda:` (a flag named so, or assigned
    from `torch.cuda.is_available()`), the `else` of `if not cuda:`, or the chosen branch of
    `x.cuda() if cuda else x`.  There `.cuda()` is the device variable in disguise."""
    function = analysis.context(node).function
    for stmt, in_body in analysis.context(node).guards:
        test = stmt.test
        if not in_body and isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test, in_body = test.operand, True
        if in_body and tests_cuda(analysis, function, test):
            return True
    child, parent = node, analysis.parents.get(node)
    while parent is not None and not isinstance(parent, ast.stmt):
        if isinstance(parent, ast.IfExp) and child is parent.body and tests_cuda(analysis, function, parent.test):
            return True
        child, parent = parent, analysis.parents.get(parent)
    return False


def under_cpu_guard(analysis: Analysis, node: ast.AST) -> bool:
    """`node` only runs when CUDA is not in use: the `else` of `if torch.cuda.is_available():`
    (or of another test that holds exactly when CUDA is used, `if args.cuda:`), the body of
    `if not use_cuda:`, or the `else` of `x.cuda() if cuda else x`.  A test joined with `and`
    says nothing there: its `else` also runs on the GPU."""
    function = analysis.context(node).function
    for stmt, in_body in analysis.context(node).guards:
        test = stmt.test
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test, in_body = test.operand, not in_body
        if not in_body and not isinstance(test, ast.BoolOp) and tests_cuda(analysis, function, test):
            return True
    child, parent = node, analysis.parents.get(node)
    while parent is not None and not isinstance(parent, ast.stmt):
        if isinstance(parent, ast.IfExp) and child is parent.orelse and not isinstance(parent.test, ast.BoolOp) \
                and tests_cuda(analysis, function, parent.test):
            return True
        child, parent = parent, analysis.parents.get(parent)
    return False


def tests_cuda(analysis: Analysis, function: FunctionInfo, test: ast.AST) -> bool:
    """A condition that holds only when CUDA is in use (one `and` operand suffices)."""
    if isinstance(test, ast.BoolOp):
        return isinstance(test.op, ast.And) and any(tests_cuda(analysis, function, v) for v in test.values)
    if isinstance(test, ast.Call):
        return analysis.call_qualname(test) == "torch.cuda.is_available"
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
        sides = (test.left, test.comparators[0])
        return any(isinstance(s, ast.Constant) and s.value == "cuda" for s in sides) and any(
            _names_the_device(s) for s in sides)
    if isinstance(test, ast.Attribute):
        return test.attr == "is_cuda" or bool(_CUDA_FLAG.search(test.attr))
    if isinstance(test, ast.Name):
        return bool(_CUDA_FLAG.search(test.id)) or _assigned_cuda_availability(analysis, function, test.id)
    return False


def _names_the_device(node: ast.AST) -> bool:
    """`device.type`, a device variable (`device`, `args.device`, `mock_device`) or its text
    (`str(device)`): compared equal to "cuda", the branch runs only on the GPU."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "str" and len(node.args) == 1:
        node = node.args[0]
    if isinstance(node, ast.Attribute):
        return node.attr == "type" or bool(DEVICE_NAME.match(node.attr))
    return isinstance(node, ast.Name) and bool(DEVICE_NAME.match(node.id))


def _assigned_cuda_availability(analysis: Analysis, function: FunctionInfo, name: str) -> bool:
    """`name` is bound (here or at module level) to an expression asking `torch.cuda.is_available()`."""
    for scope in (function, analysis.module_scope):
        for stmt in scope.statements:
            if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
                if any(isinstance(n, ast.Call) and analysis.call_qualname(n) == "torch.cuda.is_available"
                       for n in walk_nodes(stmt.value)):
                    return True
    return False


# ------------------------------------------ what a name was built from (for fixes and related info)
def construction_of(analysis: Analysis, function: FunctionInfo, name: str, at: ast.AST | None,
                    unwrap: tuple[str, ...] = (), hops: int = 3) -> ast.AST | None:
    """The expression `name` was built from, as seen at `at` in `function`: its last binding
    there (else at module level); for a parameter, what every caller in the file passes when
    they all pass names built the same way; through the wrappers named in `unwrap`
    (`DistributedDataParallel(model)` -> `model`'s construction).  None when unknown."""
    if hops < 0:
        return None
    if name in function.params and not function.is_module:
        assignment = analysis.roles_for(function).last_assignment(name, at) if at is not None else None
        if assignment is None:
            return _passed_by_every_caller(analysis, function, name, unwrap, hops)
    else:
        assignment = None
        for scope in (function, analysis.module_scope):
            roles = analysis.roles_for(scope)
            assignment = roles.last_assignment(name, at) if scope is function and at is not None else (
                (roles.assignments.get(name) or [None])[-1])
            if assignment is not None:
                break
    if assignment is None or assignment.unpacked or assignment.value is None:
        return None
    value = assignment.value
    moved = unmoved(value)
    owner = analysis.context(assignment.statement).function
    if moved is not value and isinstance(moved, ast.Name) \
            and analysis.roles_for(owner).last_assignment(moved.id, assignment.statement) is not None:
        # `model = model.cuda()` after `model = AutoModel.from_pretrained(...)`: a move of what
        # an earlier binding of the function built (a parameter's move stays as it is)
        return construction_of(analysis, owner, moved.id, assignment.statement, unwrap, hops - 1)
    if isinstance(value, ast.Call) and analysis.call_qualname(value) in unwrap and value.args:
        wrapped = unmoved(value.args[0])  # `DataParallel(model.cuda())` wraps `model`
        if isinstance(wrapped, ast.Name):
            return construction_of(analysis, owner, wrapped.id, assignment.statement, unwrap, hops - 1)
        return wrapped if isinstance(wrapped, ast.Call) else None
    return value


def constructions_of(analysis: Analysis, function: FunctionInfo, name: str, at: ast.AST) -> list[ast.AST]:
    """What `name` is built from at `at`: its construction (`construction_of`), or, for a
    parameter whose callers pass different kinds of things, what each caller in the file passes
    (one hop); empty when any of them is unknown."""
    built = construction_of(analysis, function, name, at)
    if built is not None:
        return [built]
    if name not in function.params or function.is_module:
        return []
    found = []
    for site in analysis.callers(function):
        passed = analysis.argument_for(site, function, name)
        value = construction_of(analysis, analysis.context(site).function, passed.id, site) \
            if isinstance(passed, ast.Name) else None
        if value is None:
            return []
        found.append(value)
    return found


def _passed_by_every_caller(analysis: Analysis, function: FunctionInfo, param: str,
                            unwrap: tuple[str, ...], hops: int) -> ast.AST | None:
    from torch_lsp.roles import constructed_kind

    values = []
    for site in analysis.callers(function):
        passed = analysis.argument_for(site, function, param)
        if not isinstance(passed, ast.Name):
            return None
        value = construction_of(analysis, analysis.context(site).function, passed.id, site, unwrap, hops - 1)
        if value is None:
            return None
        values.append(value)
    kinds = {constructed_kind(analysis, v) for v in values}
    return values[0] if values and len(kinds) == 1 and None not in kinds else None


def holds_plain_function(analysis: Analysis, function: FunctionInfo, name: str, at: ast.AST, hops: int = 3) -> bool:
    """`name`, as seen at `at` in `function`, can only be a plain function of the file: a name
    bound by nothing but a `def` (`def net(X): return softmax(X @ W + b)`), or a parameter that
    every caller fills with such a name, directly or through parameters of their own.  A
    from-scratch "model" written this way has no train/eval mode and no modules inside."""
    if hops < 0:
        return False
    if name in function.params and not function.is_module:
        if analysis.roles_for(function).last_assignment(name, at) is not None:
            return False
        sites = analysis.callers(function)
        return bool(sites) and all(
            isinstance(passed := analysis.argument_for(site, function, name), ast.Name)
            and holds_plain_function(analysis, analysis.context(site).function, passed.id, site, hops - 1)
            for site in sites)
    if name in analysis.imports:
        return False
    bound = [a for scope in (function, analysis.module_scope) for a in analysis.roles_for(scope).assignments.get(name, ())]
    if bound:
        return all(_partial_of_a_function(analysis, a.value) for a in bound)
    definitions = analysis.function_named(name)
    return bool(definitions) and not any(d.is_method for d in definitions)


def _partial_of_a_function(analysis: Analysis, value: ast.AST | None) -> bool:
    """`functools.partial(sliding_window_inference, predictor=model, ...)`: a function with some
    arguments filled in, a plain function of the file or an imported one named in lower case,
    not a model; calling it runs that function (the model it is given runs inside, in
    whatever mode its caller set)."""
    if not (isinstance(value, ast.Call) and analysis.call_qualname(value) == "functools.partial" and value.args):
        return False
    wrapped = value.args[0]
    if not isinstance(wrapped, ast.Name) or analysis.roles_for(value).is_model(wrapped.id):
        return False
    if wrapped.id in analysis.imports:
        return wrapped.id[:1].islower()
    definitions = analysis.function_named(wrapped.id)
    return bool(definitions) and not any(d.is_method for d in definitions)


def holds_plain_class_instance(analysis: Analysis, function: FunctionInfo, name: str, at: ast.AST,
                               hops: int = 3) -> bool:
    """`name`, as seen at `at` in `function`, can only be an instance of a plain class of the
    file, one with no base but `object`: bound last, in the body of its scope, to its
    construction (`model = Adaline1(num_features=2)`), or a parameter that every call of
    this definition fills with such a name, directly or through parameters of their own.
    A from-scratch "model" written this way holds plain tensors (`self.bias =
    torch.zeros(1)`) updated by a hand-written backward: its `weight`/`bias` are no
    `nn.Module` parameters and need no gradient."""
    if hops < 0:
        return False
    assignment = analysis.roles_for(function).last_assignment(name, at)
    if name in function.params and not function.is_module:
        if assignment is not None:
            return False
        sites = calls_of_definition(analysis, function)
        return bool(sites) and all(
            isinstance(passed := analysis.argument_for(site, function, name), ast.Name)
            and holds_plain_class_instance(analysis, analysis.context(site).function, passed.id, site, hops - 1)
            for site in sites)
    if assignment is None or assignment.unpacked or not any(s is assignment.statement for s in function.node.body):
        return False  # bound in a branch or a loop: another binding may be the one that reaches `at`
    value = assignment.value
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and _plain_file_class(analysis, value.func.id)


def _plain_file_class(analysis: Analysis, name: str) -> bool:
    """A class of the file with no base but `object` (`_plain_class`), every class of that
    name should the file define it again."""
    if name not in analysis.classes:
        return False
    return all(_plain_class(s) for s in analysis.statements if isinstance(s, ast.ClassDef) and s.name == name)


def calls_of_definition(analysis: Analysis, function: FunctionInfo) -> list[ast.Call]:
    """The calls of the file that run this definition: its `callers`, less the module-level
    calls that a later top-level definition of the same name shadows (a notebook defines
    `train` again for each model: a call runs the `def` that comes last above it)."""
    sites = analysis.callers(function)
    if function.is_method:
        return sites
    top = {id(stmt) for stmt in analysis.tree.body}
    if id(function.node) not in top:
        return sites
    definitions = [f for f in analysis.function_named(function.name) if id(f.node) in top]
    if len(definitions) < 2:
        return sites
    kept = []
    for site in sites:
        if analysis.context(site).function.is_module:
            above = [f for f in definitions if f.node.lineno < site.lineno]
            if above and max(above, key=lambda f: f.node.lineno) is not function:
                continue
        kept.append(site)
    return kept


def dispatched_calls(analysis: Analysis, function: FunctionInfo) -> list[ast.Call]:
    """Calls of a function of the file picked from a table (`sample_fn = {"heun": sample_heun,
    "euler": sample_euler}[sampler]`, then `sample_fn(denoiser, x, ...)`): in the function that
    builds the table, the calls of the name the pick is bound to.  Empty for a method."""
    if function.is_method:
        return []
    return analysis.calls_through_tables.get(function.name, [])


def _calls_through_tables(analysis: Analysis) -> dict[str, list[ast.Call]]:
    """Each function name listed in a table a pick is taken from (`fn = {...}[key]`), with the
    calls of the name the pick is bound to; one scan of the file's statements."""
    found: dict[str, list[ast.Call]] = {}
    for scope in analysis.functions:
        for stmt in scope.statements:
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                    and isinstance(stmt.value, ast.Subscript) and isinstance(stmt.value.value, (ast.Dict, ast.List))):
                continue
            table = stmt.value.value
            entries = table.values if isinstance(table, ast.Dict) else table.elts
            listed = {e.id for e in entries if isinstance(e, ast.Name)}
            if not listed:
                continue
            picked = stmt.targets[0].id
            calls = [c for c in scope.calls if isinstance(c.func, ast.Name) and c.func.id == picked
                     and _position(c) > _position(stmt)]
            for name in listed:
                found.setdefault(name, []).extend(calls)
    return found


def evaluation_after_training(analysis: Analysis) -> Iterator[tuple[FunctionInfo, ast.Call, "ModeSwitch"]]:
    """(function, model call, the `eval()` before it) for an evaluation that follows training in
    the same function: `model.eval()`, then a loop that runs the model and does not train,
    before any `model.train()` — the functions `evaluation_model_calls` leaves out because
    they compute gradients."""
    for function in analysis.functions:
        if function.is_method or not analysis.computes_gradients(function):
            continue
        roles = analysis.roles_for(function)
        switches = analysis.mode_switches.get(function, ())
        for switch in switches:
            if switch.mode != "eval":
                continue
            start = _position(switch.call)
            back = [_position(s.call) for s in switches if s.name == switch.name and s.mode == "train"
                    and _position(s.call) > start]
            end = min(back, default=(1 << 30, 0))
            for call in function.calls:
                if not start < _position(call) < end or roles.model_name(call) != switch.name:
                    continue
                context = analysis.context(call)
                if context.grad_disabled:
                    break  # the evaluation runs without autograd
                loop = context.loop
                if _in_comprehension(analysis, call):
                    # `sum(loss_fn(model(x), y) for x, y in val_loader)`: the comprehension is the pass
                    # over data; an epoch loop around it that trains only in a nested loop is no step,
                    # but a backward or step after it (in its loop, or in the function) may use it.
                    if loop is not None and analysis.is_step_loop(loop):
                        continue
                    if any(_position(c) > _position(call) and (is_backward_call(analysis, c) or roles.is_optimizer_step(c))
                           for c in (loop.calls if loop is not None else function.calls)):
                        continue
                elif loop is None or analysis.backward_calls(loop) or analysis.optimizer_steps(loop) \
                        or any(analysis.asks_for_gradients(c) for c in loop.calls):
                    continue  # trains, or differentiates through the model (an attack's input gradients)
                yield function, call, switch
                break


def reaches_a_backward(function: FunctionInfo, names: set[str], after: tuple[int, int]) -> bool:
    """One of `names` reaches a `.backward()` in `function` after the position `after` (line,
    column): in its receiver (`sum(losses).backward()`), or through names bound from it in between
    (`meta_loss = torch.stack(task_losses).mean()`, then `meta_loss.backward()`)."""
    carriers = set(names)
    for stmt in function.statements:  # in source order
        if (stmt.lineno, stmt.col_offset) > after and isinstance(stmt, (ast.Assign, ast.AugAssign)) \
                and mentions_any(stmt.value, carriers):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            carriers |= {n.id for target in targets for n in walk_nodes(target) if n.__class__ is ast.Name}
    return any(call_name(call) == "backward" and (call.lineno, call.col_offset) > after
               and mentions_any(call.func, carriers) for call in function.calls)


def runs_a_wrapper_of(analysis: Analysis, function: FunctionInfo, calls: list[ast.Call], model: str) -> bool:
    """One of `calls` runs a method of an object `function` builds around `model` (`explainer =
    Generator(model)`, then `explainer.generate_LRP(x)`, or a pick from a table of its methods,
    `{"lrp": explainer.generate_LRP}[method](x)`): what such an object does with the model is
    not known here, and explainers and attacks backpropagate through it, so a loop making
    such calls is not surely plain evaluation.  The object is a class's instance (what a
    function returns from the model, `feats = embed(model, x)`, is data); torch's own wrappers
    (`DataParallel(model)`) only run the model."""
    wrappers: set[str] = set()
    tables: set[str] = set()
    for stmt in function.statements:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
            continue
        value = unmoved(stmt.value)
        if isinstance(value, ast.Call) and (call_name(value) or "")[:1].isupper() \
                and not (analysis.call_qualname(value) or "").startswith("torch.") and any(
                isinstance(a, ast.Name) and a.id == model for a in (*value.args, *(k.value for k in value.keywords))):
            wrappers.add(stmt.targets[0].id)
    if not wrappers:
        return False
    for stmt in function.statements:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                and isinstance(stmt.value, (ast.Dict, ast.List, ast.Tuple)):
            entries = stmt.value.values if isinstance(stmt.value, ast.Dict) else stmt.value.elts
            if any(isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id in wrappers
                   for e in entries):
                tables.add(stmt.targets[0].id)
    for call in calls:
        func = call.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in wrappers:
            return True
        if isinstance(func, ast.Subscript) and isinstance(func.value, ast.Name) and func.value.id in tables:
            return True
    return False


def _in_comprehension(analysis: Analysis, node: ast.AST) -> bool:
    """`node` is computed for each element of a comprehension or generator expression (its
    element or condition, not the iterable of its first `for`)."""
    child, parent = node, analysis.parents.get(node)
    while parent is not None and not isinstance(parent, ast.stmt):
        if isinstance(parent, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            return child is not parent.generators[0].iter
        child, parent = parent, analysis.parents.get(parent)
    return False


# ---------------------------------------------- trainers written as classes (`self.model`)
@dataclass(frozen=True)
class TrainerModelCall:
    """A run of `self.<model>` in a method of a class that is not itself a module."""

    function: FunctionInfo
    call: ast.Call
    model: str  # "self.model"
    eval_before: ast.Call | None  # `self.model.eval()` earlier in the method, not switched back


def trainer_model_calls(analysis: Analysis) -> Iterator[TrainerModelCall]:
    """The first run of each `self.<model>` per method of a trainer class (`self.model(x)`,
    `self.net.forward(x)`), in methods that do not compute gradients.  A model attribute is
    one the class builds as a module or names like one (`self.model = model`)."""
    from torch_lsp.roles import MODEL_NAME, class_attribute_roles, local_module_classes

    modules = set(local_module_classes(analysis).values())
    for function in analysis.functions:
        cls = function.class_node
        if cls is None or cls in modules or not _plain_class(cls) or analysis.computes_gradients(function):
            continue
        if is_test_method(analysis, function):
            continue  # a unit test runs the model to check what it returns, not to evaluate it
        if function.name in LIGHTNING_STEPS:
            continue  # a mixin's `validation_step(self, batch, batch_idx)`, called by a LightningModule's
        built = class_attribute_roles(analysis, cls)["model"]
        methods = {node.name for node in cls.body if isinstance(node, FunctionNode)}
        seen: set[str] = set()
        for call in function.calls:
            attr = _self_model_attribute(call)
            if attr is None or attr in seen or attr in methods or not (
                    attr in built or (MODEL_NAME.match(attr) and not attr.startswith("_"))):
                continue
            if _output_discarded(analysis, function, call):
                continue  # `self.model(inputs)` as a statement evaluates nothing (a smoke test)
            seen.add(attr)
            if _bound_only_to_predictors(analysis, cls, attr):
                continue  # `self.model = YOLO(path)`: calling it runs a predictor that sets the mode and grad
            if _bound_only_to_functions(analysis, cls, attr):
                continue  # `self.model = model_fn`: a function wrapping a model (DPM-Solver), with no mode of its own
            yield TrainerModelCall(function, call, f"self.{attr}",
                                   _self_eval_before(function, attr, call, _wrapper_attributes(analysis, cls, attr)))


# Model objects whose call runs a predictor that puts the network in eval mode under
# `torch.inference_mode()` itself: Ultralytics' model classes (`YOLO(path)(image)` is
# `YOLO(path).predict(image)`), however they are imported.
_ULTRALYTICS_PREDICTORS = frozenset({"YOLO", "YOLOWorld", "YOLOE", "RTDETR", "SAM", "FastSAM", "NAS"})


# Last words of a name that says it holds a function: `model_fn`, `forward_func`.
_FUNCTION_NAME = re.compile(r"(?:^|_)(?:fn|func|function|callable)$", re.IGNORECASE)


def _bound_only_to_functions(analysis: Analysis, cls: ast.ClassDef, attr: str) -> bool:
    """Every value the class gives `self.<attr>` is a name that says it is a function
    (`self.model = model_fn`) or a lambda."""
    from torch_lsp.roles import self_attribute_values

    values = self_attribute_values(analysis, cls).get(attr, [])
    return bool(values) and all(isinstance(v, ast.Lambda) or isinstance(v, ast.Name) and _FUNCTION_NAME.search(v.id)
                                for v in values)


def _bound_only_to_predictors(analysis: Analysis, cls: ast.ClassDef, attr: str) -> bool:
    """Every value the class gives `self.<attr>` is None or an Ultralytics model object (see
    `_ULTRALYTICS_PREDICTORS`), and at least one is."""
    predictors = 0
    for node in walk_nodes(cls):
        if isinstance(node, (ast.AnnAssign, ast.AugAssign)) and is_self_attribute(node.target) \
                and node.target.attr == attr:
            return False
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            if not (is_self_attribute(target) and target.attr == attr):
                if any(is_self_attribute(e) and e.attr == attr for e in walk_nodes(target)):
                    return False  # `self.model, x = ...`: bound to something unknown
                continue
            if isinstance(node.value, ast.Constant) and node.value.value is None:
                continue
            qualname = analysis.call_qualname(node.value) if isinstance(node.value, ast.Call) else None
            if not (qualname and qualname.startswith("ultralytics.")
                    and qualname.rsplit(".", 1)[-1] in _ULTRALYTICS_PREDICTORS):
                return False
            predictors += 1
    return predictors > 0


def _plain_class(cls: ast.ClassDef) -> bool:
    """A class of its own (no base, or `object`): a base we cannot see may be a module, or
    manage the model's mode itself."""
    return all(isinstance(b, ast.Name) and b.id == "object" for b in cls.bases) and not cls.keywords


def trainer_model_attribute(analysis: Analysis, function: FunctionInfo, call: ast.Call) -> str | None:
    """`attr` when `call` runs `self.<attr>` as a model in a method of a trainer class (a plain
    class, not a module): an attribute the class builds as a model or names like one."""
    attr = _self_model_attribute(call)
    return attr if attr is not None and is_trainer_model_attribute(analysis, function, attr) else None


def is_trainer_model_attribute(analysis: Analysis, function: FunctionInfo, attr: str) -> bool:
    """`self.<attr>`, seen in a method of a trainer class (a plain class, not a module), is a
    model: the class builds it as one or names it like one."""
    from torch_lsp.roles import MODEL_NAME, class_attribute_roles, local_module_classes

    cls = function.class_node
    if cls is None or not _plain_class(cls) or cls in set(local_module_classes(analysis).values()):
        return False
    methods = {node.name for node in cls.body if isinstance(node, FunctionNode)}
    return attr not in methods and (attr in class_attribute_roles(analysis, cls)["model"]
                                     or bool(MODEL_NAME.match(attr) and not attr.startswith("_")))


def self_model_switches(analysis: Analysis, cls: ast.ClassDef, attr: str) -> list[tuple[FunctionInfo, ast.Call, str]]:
    """(method, call, "eval"/"train") for each `self.<attr>.eval()` / `.train(...)` in the class."""
    return [(function, call, mode) for function in analysis.functions if function.class_node is cls
            for call in function.calls if (mode := _self_switch(call, attr)) is not None]


def self_model_switched(analysis: Analysis, cls: ast.ClassDef, attr: str) -> bool:
    """Some method of the class calls `self.<attr>.eval()` or `.train(...)`: its mode is managed."""
    for function in analysis.functions:
        if function.class_node is cls and any(_self_switch(c, attr) for c in function.calls):
            return True
    return False


def _self_model_attribute(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == "forward":
        func = func.value
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
        return func.attr
    return None


def _self_switch(call: ast.Call, attr: str) -> str | None:
    """"eval"/"train" for `self.<attr>.eval()` / `self.<attr>.train(...)`."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr in ("eval", "train")):
        return None
    target = func.value
    if isinstance(target, ast.Attribute) and target.attr == attr and isinstance(target.value, ast.Name) \
            and target.value.id == "self":
        return _mode_of(call)
    return None


def _self_eval_before(function: FunctionInfo, attr: str, call: ast.Call,
                      wrappers: frozenset[str] = frozenset()) -> ast.Call | None:
    """The last `self.<attr>.eval()` before `call` in the function, not switched back since; a
    switch of an attribute wrapping it (`self.model_ddp.eval()` with `self.model_ddp =
    DDP(self.model)`) switches it too."""
    last = None
    for other in function.calls:
        if _position(other) >= _position(call):
            break
        mode = next((m for m in (_self_switch(other, a) for a in (attr, *wrappers)) if m is not None), None)
        if mode is not None:
            last = other if mode == "eval" else None
    return last


def _wrapper_attributes(analysis: Analysis, cls: ast.ClassDef, attr: str) -> frozenset[str]:
    """Attributes of the class bound to a wrapper of `self.<attr>` (`self.model_ddp =
    DDP(self.model, ...)`): the wrapper holds the module as its child, so switching the
    wrapper's mode switches the module's."""
    from torch_lsp.roles import self_attribute_values

    return frozenset(other for other, values in self_attribute_values(analysis, cls).items() if other != attr
                     and values and all(v is not None and _wraps_self_attribute(analysis, v, attr) for v in values))

"""The shape pass, one independent part of a file at a time, each part kept across edits.

A 2,000-line file is rarely one program: it is a dozen models, datasets and loops that
never name each other.  Top-level statements that share no module-level name cannot
exchange a value in the abstract interpreter: a function reaches another function, a
class or a module-level value only through a name bound at the top of the file.  So the
file's statements fall into *parts* (connected by the module-level names they mention,
where some statement reads the name: bindings of a name nothing reads, such as two
`def main()` nobody calls, exchange no value; the plain imports belong to every part), and
the engine runs each part on its own, as if
the file held only that part's statements.  Every frame, value and mismatch is the one the
whole-file run records: nothing one part computes is visible to another.

An edit re-runs only the part it touched.  A version parsed as an edit of the previous one
(`torch_lsp.incremental_parse`) holds the previous tree's own statement objects wherever
the edit left the text and its lines alone, so a part whose statements are the very same
objects, whose lines above them (comments stating shapes) read the same, and whose
file-wide inputs (the imports, attributes assigned on other objects, other files' versions)
are unchanged, computes the same frames: the previous run is taken over.

The file is one part, as before, when a name could reach another statement's values other
than by its name: `globals()`, `exec`, `sys.modules`, attributes assigned on an imported
module or class, or a module-level statement that ends the run (`raise`, `sys.exit()`),
after which the whole-file run executes nothing more.

The runs share one step budget, spent in source order of the parts' first statements;
a part run in a version whose budget ran out is never taken over.
"""
from __future__ import annotations

import ast
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterator

from torch_lsp.fact_cache import FactKey
from torch_lsp.shapes.limits import MAX_STEPS, Superseded, close_request, stopping_when
from torch_lsp.shapes.syntax import assigned_foreign_attributes
from torch_lsp.syntax_index import syntax_index
from torch_lsp.syntax_nodes import call_name

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.shapes.interpret import Engine
    from torch_lsp.syntax_index import StatementIndex

# Names through which code reaches module-level values without naming them.
_DYNAMIC_NAMES = frozenset({"globals", "locals", "vars", "exec", "eval", "__import__", "setattr", "delattr"})


@dataclass(frozen=True)
class StatementNames:
    """What one top-level statement says about module-level names."""

    mentions: frozenset[str]  # every identifier it uses or binds, at any depth
    binds: frozenset[str]  # the module-level names it may bind (a superset)
    shared: bool  # a plain import, docstring or `pass`: part of every part
    attribute_roots: frozenset[str]  # names whose attributes it assigns (`config.lr = ...`)
    dynamic: bool  # `globals()`, `exec`, `sys.modules`, `setattr`...
    # Identifiers it may read, at any depth (a superset: a local of the same name counts):
    # loaded or deleted names, augmented targets (`x += 1`), `global`/`nonlocal` names.
    reads: frozenset[str] = frozenset()


_STATEMENT_NAMES: "FactKey[StatementNames]" = FactKey("names a top-level statement mentions")


def statement_names(statement: ast.stmt, nodes: "StatementIndex") -> StatementNames:
    """What `statement` says about module-level names, read from the index of its nodes
    (`syntax_index`, which holds every node a walk of the statement gives): a second walk
    of every node costs as much as parsing the file, on each file opened."""
    kind = statement.__class__
    if kind is ast.Import or kind is ast.ImportFrom:
        binds = frozenset((alias.asname or alias.name).split(".")[0] for alias in statement.names)
        return StatementNames(binds, binds, True, frozenset(), False)
    if kind is ast.Pass or (kind is ast.Expr and statement.value.__class__ is ast.Constant):
        return StatementNames(frozenset(), frozenset(), True, frozenset(), False)
    mentions: set[str] = set()
    stored: set[str] = set()
    declared: set[str] = set()
    roots: set[str] = set()
    dynamic = False
    reads: set[str] = set()
    for node in nodes.nodes(ast.Name):
        mentions.add(node.id)
        if node.ctx.__class__ is not ast.Load:
            stored.add(node.id)
        if node.ctx.__class__ is not ast.Store:
            reads.add(node.id)
    for node in nodes.nodes(ast.AugAssign):
        root = _root_name(node.target)
        if root is not None:
            reads.add(root)
    for node in nodes.nodes(ast.Attribute):
        if node.attr == "modules" and node.value.__class__ is ast.Name and node.value.id == "sys":
            dynamic = True
        if node.ctx.__class__ is not ast.Load:
            root = _root_name(node)
            if root is not None:
                roots.add(root)
    for definition in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
        for node in nodes.nodes(definition):
            mentions.add(node.name)
            stored.add(node.name)
    for declaration in (ast.Global, ast.Nonlocal):
        for node in nodes.nodes(declaration):
            mentions.update(node.names)
            declared.update(node.names)
            reads.update(node.names)
    for node in nodes.nodes(ast.alias):
        name = (node.asname or node.name).split(".")[0]
        mentions.add(name)
        stored.add(name)
    for node in nodes.nodes(ast.ExceptHandler):
        if node.name:
            mentions.add(node.name)
            stored.add(node.name)
    for node in nodes.nodes(ast.arg):
        mentions.add(node.arg)
    if mentions & _DYNAMIC_NAMES:
        dynamic = True
    if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
        binds = {statement.name} | declared  # its body's names are its own
    else:
        binds = stored | declared
    return StatementNames(frozenset(mentions), frozenset(binds), False, frozenset(roots), dynamic, frozenset(reads))


def _root_name(node: ast.AST) -> str | None:
    while node.__class__ in (ast.Attribute, ast.Subscript):
        node = node.value
    return node.id if node.__class__ is ast.Name else None


def partition(analysis: "Analysis", by_called_names: bool = False) -> list[tuple[list[int], int]] | None:
    """The indices of the module's top-level statements in each part (in source order; the
    shared statements in every part) and the index of the part's first own statement, or
    None when the file must run as one.  With `by_called_names`, a statement calling a name
    (`f(...)`, `obj.f(...)`) is also in the part of every statement defining a function of
    that name, at any depth (`rule_parts`: the rules look functions up by the called name)."""
    body = analysis.tree.body
    index = syntax_index(analysis)
    facts = analysis.statement_facts.each(
        _STATEMENT_NAMES, lambda statement: statement_names(statement, index.of_statement(statement)))
    bound: set[str] = set()
    imported: set[str] = set()
    for names in facts:
        if names.dynamic:
            return None
        (imported if names.shared else bound).update(names.binds)
    parent = list(range(len(body)))

    def find(index: int) -> int:
        while parent[index] != index:
            parent[index] = parent[parent[index]]
            index = parent[index]
        return index

    def join(one: int, other: int) -> None:
        a, b = find(one), find(other)
        if a != b:
            parent[max(a, b)] = min(a, b)

    # A module-level name that no statement reads joins nothing: statements that only bind it
    # (the examples' four `def main()`, a notebook's redefined helper nobody calls) exchange no
    # value through it, whichever binding comes last.
    read_anywhere: set[str] = set()
    for names in facts:
        if not names.shared:
            read_anywhere |= names.reads
    first_with: dict[str, int] = {}
    for index, names in enumerate(facts):
        if names.shared:
            continue
        if names.attribute_roots & (imported - bound):
            return None  # `config.lr = ...` on an imported module or class: seen by every part
        for name in names.mentions & bound & read_anywhere:
            other = first_with.setdefault(name, index)
            if other != index:
                join(index, other)
    if by_called_names:
        nodes = syntax_index(analysis)
        calls = analysis.statement_facts.each(
            _DEFINED_AND_CALLED, lambda statement: defined_and_called(nodes.of_statement(statement)))
        defining: dict[str, list[int]] = {}
        for index, (defined, _) in enumerate(calls):
            if not facts[index].shared:
                for name in defined:
                    defining.setdefault(name, []).append(index)
        for index, (_, called) in enumerate(calls):
            if not facts[index].shared:
                for name in called:
                    for other in defining.get(name, ()):
                        join(index, other)
    shared = [index for index, names in enumerate(facts) if names.shared]
    groups: dict[int, list[int]] = {}
    for index, names in enumerate(facts):
        if not names.shared:
            groups.setdefault(find(index), []).append(index)
    if len(groups) < 2:
        return None
    return [(sorted(shared + members), members[0]) for members in groups.values()]


_DEFINED_AND_CALLED: "FactKey[tuple[frozenset[str], frozenset[str]]]" = FactKey(
    "functions a statement defines, names it calls")


def defined_and_called(nodes: "StatementIndex") -> tuple[frozenset[str], frozenset[str]]:
    """The names of the functions a top-level statement defines (at any depth) and the names
    it calls (`f(...)`, `obj.f(...)`; not `super().__init__(...)`, which no lookup by name
    finds), read from the index of its nodes (`syntax_index`), as `statement_names` reads."""
    defined = {node.name for kind in (ast.FunctionDef, ast.AsyncFunctionDef) for node in nodes.nodes(kind)}
    called = set()
    for node in nodes.nodes(ast.Call):
        if not _on_super(node):
            name = call_name(node)
            if name:
                called.add(name)
    return frozenset(defined), frozenset(called)


def _on_super(call: ast.Call) -> bool:
    func = call.func
    return (func.__class__ is ast.Attribute and func.value.__class__ is ast.Call
            and func.value.func.__class__ is ast.Name and func.value.func.id == "super")


@dataclass
class Part:
    """One part's statements and what its run reads from the rest of the file."""

    statements: tuple[ast.stmt, ...]
    anchor: int  # the index of its first statement not shared with other parts
    module: ast.Module  # a module of only these statements, the run's module node
    functions: list  # the analysis's FunctionInfo of these statements, in source order
    lines_above: tuple[str, ...]  # each statement's line above (a comment may state a shape)
    foreign_volatile: frozenset[str]
    imports: dict[str, str]
    steps_before: int  # steps the earlier parts spent of the shared budget
    step_limit: int | None  # where the earlier parts' runs were to ask next whether to stop


@dataclass
class PartRun:
    """A part's finished run, which later versions take over while their part is the same."""

    part: Part
    engine: "Engine"
    steps: int
    foreign: dict[str, Any]  # module -> the analysis the run read it from (None: not found)
    reports: int = 1  # reports that hold the run
    kept: bool = False  # held for the document's next version (`keeping_parts`)
    released: bool = False
    # The main file's frames that recorded each node (`ShapeReport`), built on first use.
    frames_by_node: dict | None = None


@dataclass
class KeptParts:
    """A document's runs kept for its next version, and its length (lines)."""

    runs: list[PartRun]
    lines: int


# The newest parts of the documents checked last, kept for their next version (see
# `keeping_parts`), least recently checked first.  Read and written on the thread that checks
# documents.
_latest: dict[str, KeptParts] = {}
# Parts are kept for the most recently checked documents up to this many lines in all (the
# last one always), as the server keeps analyses (`CheckCache.ANALYSED_LINES_KEPT`): a kept
# run holds about as much as the whole shape pass of its part.
KEPT_LINES = 6000
_document: ContextVar[str | None] = ContextVar("shape parts document", default=None)


@contextmanager
def keeping_parts(document: str) -> Iterator[None]:
    """Shape passes run in this block are of versions of `document` (a language server's open
    document): each takes over the unchanged parts of the one before, and keeps its own parts
    for the next, until `forget_parts(document)`.  Without it, nothing is kept."""
    token = _document.set(document)
    try:
        yield
    finally:
        _document.reset(token)


def current_document() -> str | None:
    """The open document whose versions are checked in this block (`keeping_parts`), or None."""
    return _document.get()


def forget_parts(document: str) -> None:
    """The document is closed: its kept parts are released with the last report holding them."""
    kept = _latest.pop(document, None)
    if kept is not None:
        for run in kept.runs:
            run.kept = False
            _settle(run)


def run_in_parts(analysis: "Analysis", resolver, make_engine) -> "PartEngines | None":
    """The shape pass of `analysis` part by part (None: the file runs as one), taking over
    the runs of the previous version's unchanged parts under `keeping_parts`."""
    parts = partition(analysis)
    if parts is None:
        return None
    document = _document.get()
    previous = _latest.get(document) if document is not None else None
    kept = {run.part.statements[run.part.anchor]: run for run in previous.runs} if previous is not None else {}
    body = analysis.tree.body
    lines = analysis.lines
    foreign_volatile = frozenset(assigned_foreign_attributes(analysis))
    groups: list[list] | None = None  # each statement's functions: only parts that run need them
    found_modules: dict[str, Any] = {}  # what the resolver finds now, asked once per module
    steps = 0
    step_limit = None
    runs: list[PartRun] = []
    finished = 0  # runs[:finished] ran to their end (or were taken over)
    # A document's first pass runs to its end even when the user types on (not once the document
    # is closed): every later version takes its parts over, while stopped, it would leave the next
    # version as much to do (typing right after opening, no pass would ever finish).  Later
    # passes, which run only the parts an edit touched, stop when typed past.
    first_pass = document is not None and previous is None
    try:
        for indices, first_own in parts:
            statements = tuple(body[i] for i in indices)
            above = tuple(lines.line_text(s.lineno - 1) if s.lineno > 1 else "" for s in statements)
            anchor = indices.index(first_own)
            run = kept.get(statements[anchor])
            if run is not None and _still_valid(run, statements, above, foreign_volatile, analysis, steps,
                                                resolver, found_modules):
                run.reports += 1
                run.engine.main.analysis = analysis
                run.engine.main.lines = lines
                runs.append(run)
                finished += 1
                steps += run.steps
                continue
            if groups is None:
                groups = _function_groups(analysis)
            functions = [info for i in indices for info in groups[i]]
            part = Part(statements, anchor, ast.Module(body=list(statements), type_ignores=[]), functions, above,
                        foreign_volatile, dict(analysis.imports), steps, step_limit)
            with stopping_when(close_request() or _never) if first_pass else nullcontext():
                engine = make_engine(part)  # it reads there whether, and when, to stop
            run = PartRun(part, engine, 0, {})
            runs.append(run)
            engine.run()
            if not engine.module_completed:
                for run in runs:
                    _drop(run)
                return None  # a module-level statement ended the run: later parts would not run
            part.functions = []  # only the run needed them
            run.steps = engine.steps - steps
            run.foreign = {module: (scope.analysis if scope is not None else None)
                           for module, scope in engine.foreign.items()}
            steps, step_limit = engine.steps, engine.step_limit
            finished += 1
    except BaseException as stopped:
        if document is not None and isinstance(stopped, Superseded):
            # The parts that ran to their end are as good as any: the next version takes them
            # over (a storm of edits right after opening still gets the pass done, part by part).
            alive = {id(statement) for statement in body}
            older = [run for run in previous.runs if id(run.part.statements[run.part.anchor]) in alive
                     and run not in runs] if previous is not None else []
            _keep(document, older + runs[:finished], previous, len(lines.lines))
        for run in runs:
            _drop(run)
        raise
    found = PartEngines(analysis, runs)
    if document is not None:
        _keep(document, runs, previous, len(lines.lines))
    return found


def _never() -> bool:
    return False


def _keep(document: str, runs: list[PartRun], previous: KeptParts | None, lines: int) -> None:
    """`runs` are the document's kept parts now, instead of `previous`'s."""
    if previous is not None:
        for run in previous.runs:
            run.kept = False
    for run in runs:
        run.kept = True
    _latest.pop(document, None)
    _latest[document] = KeptParts(runs, lines)
    if previous is not None:
        for run in previous.runs:
            _settle(run)
    _forget_beyond(KEPT_LINES)


def _forget_beyond(budget: int) -> None:
    """Forget the parts of the least recently checked documents past `budget` lines."""
    total = sum(kept.lines for kept in _latest.values())
    for document in list(_latest)[:-1]:
        if total <= budget:
            break
        total -= _latest[document].lines
        forget_parts(document)


def _function_groups(analysis: "Analysis") -> list[list]:
    """Each top-level statement's functions (the analysis's FunctionInfo, in source order)."""
    groups = []
    start = 1  # after the module's own
    for count in analysis.functions_per_statement:
        groups.append(analysis.functions[start:start + count])
        start += count
    return groups


def _still_valid(run: PartRun, statements, above, foreign_volatile, analysis, steps_before, resolver,
                 found_modules: dict[str, Any]) -> bool:
    part = run.part
    if run.released or run.engine.exhausted or steps_before + run.steps > MAX_STEPS:
        return False  # its run would now reach the step cap (and stop where it did not)
    if len(part.statements) != len(statements) or any(a is not b for a, b in zip(part.statements, statements)):
        return False
    if part.lines_above != above or part.foreign_volatile != foreign_volatile or part.imports != analysis.imports:
        return False
    if run.foreign and resolver is None:
        return False
    for module, was in run.foreign.items():
        if module not in found_modules:
            found_modules[module] = resolver.analysis_of(module, analysis.path)
        if found_modules[module] is not was:
            return False  # another file changed, appeared or went away
    return True


def _drop(run: PartRun) -> None:
    """A report that held `run` is released."""
    run.reports -= 1
    _settle(run)


def _settle(run: PartRun) -> None:
    """Release `run` once nothing holds it; while only the document's next version may take it
    over, it lets go of the analysis it was last read with (a whole tree and its facts: the
    version the server no longer serves, or serves as diagnostics only)."""
    if run.released or run.reports > 0:
        return
    if run.kept:
        run.engine.main.analysis = run.engine.main.lines = None
        return
    run.released = True
    run.frames_by_node = None
    run.engine.release()


class PartEngines:
    """The parts' engines, read by the report as one engine of the whole file."""

    def __init__(self, analysis: "Analysis", runs: list[PartRun]):
        self.runs = runs
        self.exhausted = any(run.engine.exhausted for run in runs)
        self.mismatches = [m for run in runs for m in run.engine.mismatches]
        self.overflowed = set().union(*(run.engine.overflowed for run in runs))
        merged: dict[ast.AST, list] = {}
        for run in runs:
            for function, frames in run.engine.frames_by_function.items():
                key = analysis.tree if function is run.part.module else function
                merged.setdefault(key, []).extend(frames)
        self.frames_by_function = merged

    def frames_by_node(self, build: Callable[[dict], dict]) -> dict:
        """The frames that recorded each node, over all runs: `build` of each run's frames (once
        per run, kept with it), the tables of the shared statements' nodes (the imports, which
        every part runs) joined in run order, as one table of all the runs' frames gives them."""
        table: dict = {}
        for run in self.runs:
            if run.frames_by_node is None:
                run.frames_by_node = build(run.engine.frames_by_function)
            table.update(run.frames_by_node)
        if len(self.runs) > 1:
            common = set.intersection(*({id(s) for s in run.part.statements} for run in self.runs))
            for statement in self.runs[0].part.statements:
                if id(statement) in common:
                    for node in ast.walk(statement):
                        frames = [f for run in self.runs for f in run.frames_by_node.get(node, ())]
                        if frames:
                            table[node] = frames
        return table

    def release(self) -> None:
        """Releases the runs no later version took over (see `Engine.release`)."""
        for run in self.runs:
            _drop(run)
        self.frames_by_function, self.mismatches, self.overflowed = {}, [], set()

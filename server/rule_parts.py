"""The rules, one independent part of a file at a time, each part's findings kept across edits.

A typed character changes one function, yet every rule reads the whole file again: at
2,000 lines the rules cost more than parsing the file.  The shape pass already splits a
file into *parts*, groups of top-level statements connected by the module-level names
they mention (`shapes.components.partition`); a part reaches another part's code and
values only through such a name, so it cannot call, construct, evaluate or train
anything of another part.  The rules reason the same way (what a function calls, which
model a loop trains, where an optimizer was made), with one exception they share: they
find the functions a call may run by the called name alone (`trainer.evaluate()` ->
every function named `evaluate`), so `rule_partition` joins a part calling a name with
the parts defining a function of that name.  A rule's findings in one part are then the
findings it gives on a file holding only that part's statements (and the imports every
part shares).

Some rules also read a fact of the whole file: whether it trains anywhere, puts anything
on a GPU, turns gradients off somewhere, switches a model of some name to eval mode.  They
read it with `Analysis.file_fact`, which a part's analysis answers from the whole file's and
notes: a part's findings are taken over only while every fact they read has the same value
in the new version.  Rules whose reading of the rest of the file is not one such fact (a
load matched with a save by the path's text, the options an argument parser defines) say so
(`Rule.whole_file`) and run on the whole file at every check.

The rules that read the shape pass run part by part too, on the whole file's shapes (a
part's analysis reads them, `infer_shapes`).  The shape pass's own parts are finer than
these (the rules' parts join some of them), each run kept across edits while its
statements are unchanged (`shapes.components`): a part's shape findings are taken over
only while the shape pass took over every run of its statements, the very same runs.  The
server checks in two steps (the rules that read the shape pass second), so each step's
findings are kept on their own.

So, for an open document (`keeping_parts`): the first check runs every rule on the whole
file and files each part-local finding under the part holding its line; a later version
re-runs the part-local rules only on the parts it changed (on `analysis.part_analysis`
of their statements), and takes the other parts' findings over.  A part is unchanged when
it holds the very same statement objects (an edit re-parses only the statements it
touched, `incremental_parse`), the lines just above them read the same, and every other
file its rules read (`workspace_files.reading_files`) is the same analysis.  A file that
does not split, has syntax errors, or is checked by the command line is checked whole.
`bench/rule_parts_check.py` checks on real code that both ways give the same findings
after random edits, and `tests/robustness/test_rule_parts.py` after chains of edits.
"""
from __future__ import annotations

import ast
from bisect import bisect_right
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from torch_lsp.diagnostics import (
    MAX_FINDINGS_PER_FILE, MAX_FINDINGS_PER_LINE, Finding, all_rules, merge_findings, run_rules,
)
from torch_lsp.fact_cache import FactKey
from torch_lsp.incremental_parse import first_line
from torch_lsp.shapes.components import current_document, partition
from torch_lsp.workspace_files import reading_files, workspace_analysis

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis

# Kept for the most recently checked documents up to this many lines in all (the last one
# always), as the shape pass keeps its parts: the kept statements are the current version's.
KEPT_LINES = 6000


@dataclass
class PartFindings:
    """One part's statements, what its rules read beyond them, and their findings there."""

    statements: tuple[ast.stmt, ...]
    lines_above: tuple[str, ...]
    # (module, importer path) -> the analysis `workspace_files` gave for it (None: not found).
    foreign: dict[tuple[str, str | None], Any]
    findings: list[Finding]
    # The facts of the whole file its rules read (`Analysis.file_fact`): key -> (compute, value).
    file_facts: dict[Any, tuple[Callable, Any]]
    # The shape pass's runs of its statements (`shapes.components.PartRun`), when its rules
    # read the shape pass: its findings hold while the pass takes these very runs over.
    shape_runs: tuple = ()


@dataclass
class KeptFindings:
    """A document's part findings, kept for its next version, under what they were computed."""

    key: tuple  # path, torch version, selected rules and their severities
    parts: dict[int, PartFindings]  # by id of the part's first own statement


@dataclass
class KeptDocument:
    """What is kept of a document for each step of its checks: the rules that read the shape
    pass (True) and the others (False), which the language server runs one after the other."""

    steps: dict[bool, KeptFindings]
    lines: int


# The newest findings of the documents checked last, least recently checked first.  Read and
# written on the thread that checks documents.
_latest: dict[str, KeptDocument] = {}


def whole_file(code: str) -> bool:
    """Whether rule `code` reads facts of the whole file (run on the whole file always): the
    rules marked so, and those reading the probe's report, which run on the whole."""
    return code in _whole_file_codes()


def _whole_file_codes() -> frozenset[str]:
    return frozenset(code for code, rule in all_rules().items() if rule.whole_file or rule.needs_probe)


def run_rules_in_parts(analysis: "Analysis", is_selected: Callable[[str], bool],
                       severity_of: Callable[[str], str | None]) -> list[Finding]:
    """`run_rules(analysis, is_selected, severity_of)`, computed part by part for an open
    document (see the module docstring), else on the whole file."""
    document = current_document()
    version = _version_parts(analysis) if document is not None and not analysis.syntax_errors else None
    parts = version.parts if version is not None else None
    selected = [code for code in all_rules() if is_selected(code)]
    whole = _whole_file_codes()
    local = frozenset(selected) - whole
    step = any(all_rules()[code].needs_shapes for code in local)
    shape_runs = _shape_runs(analysis) if parts is not None and step else {}
    if parts is None or shape_runs is None:
        if document is not None:
            _forget_step(document, step)
        return run_rules(analysis, is_selected, severity_of)
    key = (analysis.path, analysis.torch_version, tuple((code, severity_of(code)) for code in selected))
    kept = _latest[document].steps.get(step) if document in _latest else None
    if kept is None or kept.key != key:
        return _first_check(document, step, analysis, parts, key, whole, shape_runs, is_selected, severity_of)
    findings = run_rules(analysis, lambda code: code in whole and is_selected(code), severity_of)
    found_now: dict[tuple[str, str | None], Any] = {}
    new_parts: dict[int, PartFindings] = {}
    for part in parts:
        runs = _runs_of(part.statements, shape_runs)
        entry = kept.parts.get(id(part.anchor))
        if entry is None or not _still_valid(entry, analysis, part, runs, found_now):
            entry = _run_part(analysis, part, runs, lambda code: code in local, severity_of)
        new_parts[id(part.anchor)] = entry
        findings.extend(entry.findings)
    if _at_a_cap(findings):
        _forget_step(document, step)  # which findings the caps keep depends on the order of one run
        return run_rules(analysis, is_selected, severity_of)
    _keep(document, step, KeptFindings(key, new_parts), len(analysis.lines.lines))
    return merge_findings(findings)


def _at_a_cap(findings: list[Finding]) -> bool:
    """Whether the findings reach the caps of one run (per line, per file), where the run's
    rule order decides which are kept: such a file is checked whole."""
    unique = {(f.code, f.line, f.col, f.end_line, f.end_col) for f in findings}  # a shared line's, once
    if len(unique) >= MAX_FINDINGS_PER_FILE:
        return True
    per_line: dict[int, int] = {}
    for _, line, *_ in unique:
        per_line[line] = per_line.get(line, 0) + 1
    return any(count >= MAX_FINDINGS_PER_LINE for count in per_line.values())


@dataclass
class VersionPart:
    """One of the rules' parts of a version: its top-level statements (their indices in the
    module's body, and the statements), each one's line above, and its first own statement."""

    indices: list[int]
    statements: tuple[ast.stmt, ...]
    lines_above: tuple[str, ...]
    anchor: ast.stmt


@dataclass
class VersionParts:
    """The rules' parts of one version (None: the file is one), found once for both steps of
    its check.  It holds statements and lines, never an analysis: kept in the version's own
    facts, a part's analysis (which holds the whole file's) would make a reference cycle,
    freed only by a full collection (which the server postpones, `gc.freeze`), so a version
    whose second step never ran (typed past) would stay in memory."""

    parts: list[VersionPart] | None


_VERSION_PARTS: "FactKey[VersionParts]" = FactKey("the rules' parts of a version")


def _version_parts(analysis: "Analysis") -> VersionParts:
    def find() -> VersionParts:
        found = rule_partition(analysis)
        if found is None:
            return VersionParts(None)
        body = analysis.tree.body
        parts = []
        for indices, first_own in found:
            statements = tuple(body[i] for i in indices)
            parts.append(VersionPart(indices, statements, _lines_above(analysis, statements), body[first_own]))
        return VersionParts(parts)

    return analysis.facts.get_or_compute(_VERSION_PARTS, find)


def rule_partition(analysis: "Analysis") -> list[tuple[list[int], int]] | None:
    """The shape pass's parts joined where the rules' name lookups cross them: the rules find
    the functions a call may run by the called name alone (`analysis.function_named("evaluate")`
    for `trainer.evaluate()`, its callers through `call_sites`), so a part calling a name
    that another part defines a function or method of is one part with it (`partition` with
    `by_called_names`).  None: the file is one part."""
    return partition(analysis, by_called_names=True)


def forget_rule_parts(document: str) -> None:
    """The document is closed: its kept findings go."""
    _latest.pop(document, None)


def _forget_step(document: str, step: bool) -> None:
    """The document's step is checked whole this time: what was kept of it goes."""
    kept = _latest.get(document)
    if kept is not None:
        kept.steps.pop(step, None)
        if not kept.steps:
            del _latest[document]


def _shape_runs(analysis: "Analysis") -> dict[int, Any] | None:
    """The shape pass's run (`PartRun`) of each top-level statement that only one run holds
    (by id; the imports every run holds are left out), or None when the pass ran the file
    as one, which no part of the rules' can take over."""
    from torch_lsp.shapes import infer_shapes
    from torch_lsp.shapes.components import PartEngines

    engine = infer_shapes(analysis).engine
    if not isinstance(engine, PartEngines):
        return None
    runs_of: dict[int, list] = {}
    for run in engine.runs:
        for statement in run.part.statements:
            runs_of.setdefault(id(statement), []).append(run)
    return {key: runs[0] for key, runs in runs_of.items() if len(runs) == 1}


def _runs_of(statements: tuple[ast.stmt, ...], shape_runs: dict[int, Any]) -> tuple:
    """The shape pass's runs of `statements`, each once, in order."""
    runs = {id(run): run for run in (shape_runs.get(id(s)) for s in statements) if run is not None}
    return tuple(runs.values())


def _first_check(document: str, step: bool, analysis: "Analysis", parts, key: tuple, whole: frozenset[str],
                 shape_runs: dict[int, Any], is_selected, severity_of) -> list[Finding]:
    """Every rule on the whole file, each part-local finding filed under its part."""
    with reading_files() as read:
        findings = run_rules(analysis, is_selected, severity_of)
    if _at_a_cap(findings):
        _forget_step(document, step)
        return findings
    body = analysis.tree.body
    owner = {index: number for number, part in enumerate(parts) for index in part.indices}
    shared = set.intersection(*(set(part.indices) for part in parts))
    # A finding belongs to the top-level statement whose lines hold it (the blank and comment
    # lines after a statement belong to it, as in `incremental_parse`); a shared statement's
    # (an import's) to every part, as each part's own run would report it.
    first_lines = [first_line(statement) for statement in body]
    per_part: list[list[Finding]] = [[] for _ in parts]
    for finding in findings:
        if finding.code in whole:
            continue
        index = bisect_right(first_lines, finding.line) - 1
        if index < 0:
            _forget_step(document, step)
            return findings  # before the first statement: filed nowhere, so nothing is kept
        if index in shared:
            for bucket in per_part:
                bucket.append(finding)
        else:
            per_part[owner[index]].append(finding)
    kept: dict[int, PartFindings] = {}
    for part, part_findings in zip(parts, per_part):
        kept[id(part.anchor)] = PartFindings(part.statements, part.lines_above, {**analysis.files_read, **read},
                                             part_findings, dict(analysis.file_facts_read),
                                             _runs_of(part.statements, shape_runs))
    _keep(document, step, KeptFindings(key, kept), len(analysis.lines.lines))
    return findings


def _run_part(analysis: "Analysis", part: VersionPart, shape_runs: tuple, is_selected,
              severity_of) -> PartFindings:
    from torch_lsp.analysis import part_analysis

    analysed = part_analysis(analysis, list(part.statements))
    with reading_files() as read:
        findings = run_rules(analysed, is_selected, severity_of)
    return PartFindings(part.statements, part.lines_above, {**analysed.files_read, **read}, findings,
                        dict(analysed.file_facts_read), shape_runs)


def _still_valid(entry: PartFindings, analysis: "Analysis", part: VersionPart, shape_runs: tuple,
                 found_now: dict) -> bool:
    statements = part.statements
    if len(entry.statements) != len(statements) or any(a is not b for a, b in zip(entry.statements, statements)):
        return False
    if entry.lines_above != part.lines_above:
        return False
    if len(entry.shape_runs) != len(shape_runs) or any(a is not b for a, b in zip(entry.shape_runs, shape_runs)):
        return False  # the shape pass ran one of its statements' parts again
    for key, (compute, value) in entry.file_facts.items():
        if analysis.file_fact(key, compute) != value:
            return False  # another part changed what the whole file says
    for (module, importer), was in entry.foreign.items():
        if (module, importer) not in found_now:
            found_now[module, importer] = workspace_analysis(module, importer)
        if found_now[module, importer] is not was:
            return False  # another file changed, appeared or went away
    return True


def _lines_above(analysis: "Analysis", statements: tuple[ast.stmt, ...]) -> tuple[str, ...]:
    lines = analysis.lines
    return tuple(lines.line_text(first_line(s) - 1) if first_line(s) > 1 else "" for s in statements)


def _keep(document: str, step: bool, kept: KeptFindings, lines: int) -> None:
    previous = _latest.pop(document, None)
    steps = previous.steps if previous is not None else {}
    steps[step] = kept
    _latest[document] = KeptDocument(steps, lines)
    total = sum(entry.lines for entry in _latest.values())
    for other in list(_latest)[:-1]:
        if total <= KEPT_LINES:
            break
        total -= _latest.pop(other).lines

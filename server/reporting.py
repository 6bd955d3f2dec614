"""How the command line shows things: findings in each output format, and the rule
catalogue as a table, as one rule's page, and as the docs page (docs/rules.md).

Positions in every format are 1-based lines and 1-based code-point columns (like
ruff); end columns point just past the last character, as SARIF's do.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Iterable, Mapping
from urllib.parse import quote

from torch_lsp import DOCS_URL, __version__
from torch_lsp.checker import SYNTAX_ERROR_CODE
from torch_lsp.diagnostics.base import FixInfo, Rule

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_LEVELS = {"error": "error", "warning": "warning", "information": "note", "hint": "note"}
GITHUB_COMMANDS = {"error": "error", "warning": "warning", "information": "notice", "hint": "notice"}
INFORMATION_URI = "https://github.com/torch-lsp/torch-lsp"


@dataclass(frozen=True)
class Problem:
    """One finding as the command line reports it."""

    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    code: str
    severity: str
    message: str
    fix: FixInfo | None
    # (path, line, column, end_line, end_column, message): what the finding depends on, 1-based;
    # in a notebook a 7th item, the related place's cell.
    related: tuple[tuple, ...] = ()
    cell: int | None = None  # in a notebook: the 1-based cell, and `line` counts within it
    # The same problem at the line that raises, in another file (a call here makes that file's
    # code fail): reported there instead when that file is checked too (`reported_where_raised`).
    raised_in: "Problem | None" = None
    silenced: bool = False  # a problem raised elsewhere that a `# noqa` there silences

    def as_json(self) -> dict:
        fix = {"title": self.fix.title, "safety": self.fix.safety} if self.fix else None
        extra = {"related": [dict(zip(("path", "line", "column", "end_line", "end_column", "message", "cell"), r))
                             for r in self.related]} if self.related else {}
        where = {"cell": self.cell} if self.cell is not None else {}
        return {
            "path": self.path,
            **where,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "fix": fix,
            **extra,
        }


def problems_of(result, shown_path: str, program=None) -> list[Problem]:
    """The findings of a `CheckResult` with `ast` positions turned into 1-based columns; for
    a notebook's `program` (`torch_lsp.notebooks`), lines counted within their cells."""
    lines = result.analysis.lines
    problems = [_problem(finding, shown_path, lines, shown_path, raised_in=_raised_problem(finding, lines, shown_path))
                for finding in result.findings]
    return [in_cell(problem, program) for problem in problems] if program is not None else problems


def _problem(finding, path: str, lines, shown_path: str, **more) -> Problem:
    """A finding in the file at `path` (whose text `lines` holds) as a problem; related places
    without a path are in the checked file shown as `shown_path`."""
    return Problem(
        path=path,
        line=finding.line,
        column=lines.char_column(finding.line, finding.col) + 1,
        end_line=finding.end_line,
        end_column=lines.char_column(finding.end_line, finding.end_col) + 1,
        code=finding.code,
        severity=finding.severity,
        message=finding.message,
        fix=finding.fix,
        related=tuple(_related_of(r, lines, shown_path) for r in finding.related),
        **more,
    )


def _raised_problem(finding, lines, shown_path: str) -> Problem | None:
    """The finding as the other file where its error happens shows it, or None."""
    raised = finding.raised_in
    if raised is None:
        return None
    return _problem(raised.finding, raised.path, raised.lines, shown_path, silenced=raised.silenced)


def in_cell(problem: Problem, program) -> Problem:
    """A problem of a notebook's program with its lines counted within its cell."""
    cell, line = program.cell_line(problem.line)
    _, end_line = program.cell_line(problem.end_line, within=cell)
    related = tuple(_related_in_cell(r, problem.path, program) for r in problem.related)
    raised_in = problem.raised_in
    if raised_in is not None:
        raised_in = replace(raised_in, related=tuple(_related_in_cell(r, problem.path, program)
                                                     for r in raised_in.related))
    return replace(problem, cell=cell.number, line=line, end_line=end_line, related=related,
                   message=program.in_cell_terms(problem.message), raised_in=raised_in)


def reported_where_raised(problems: list[Problem], checked: list[str]) -> list[Problem]:
    """The problems with each one a call proves in another checked file reported once, at
    the line that raises there, the calls as its related places (as a type checker reports
    an error in the file that holds it); those whose file is not checked stay at the call,
    and one that a `# noqa` silences on the line that raises is reported nowhere.
    `checked`: the paths of the checked files as shown, in order."""
    shown_by_file = {os.path.abspath(path): path for path in checked}
    kept: list[Problem] = []
    moved: dict[tuple, Problem] = {}
    for problem in problems:
        raised = problem.raised_in
        shown = shown_by_file.get(os.path.abspath(raised.path)) if raised is not None else None
        if shown is None:
            kept.append(problem)
            continue
        if raised.silenced:
            continue
        key = (shown, raised.line, raised.column, raised.code)
        earlier = moved.get(key)
        moved[key] = (replace(earlier, related=earlier.related + raised.related) if earlier is not None
                      else replace(raised, path=shown))
    if len(kept) == len(problems):
        return problems
    # The file's own check may prove the same error (a call of its own): reported once.
    own = {(p.path, p.line, p.column, p.code) for p in kept if p.cell is None}
    order = {path: index for index, path in enumerate(checked)}
    found = kept + [problem for key, problem in moved.items() if key not in own]
    return sorted(found, key=lambda p: (order.get(p.path, len(order)), p.cell or 0, p.line, p.column))


def _related_in_cell(related: tuple, path: str, program) -> tuple:
    if related[0] != path:
        return related
    cell, line = program.cell_line(related[1])
    _, end_line = program.cell_line(related[3], within=cell)
    return (path, line, related[2], end_line, related[4], program.in_cell_terms(related[5]), cell.number)


def _related_of(related, lines, shown_path: str) -> tuple[str, int, int, int, int, str]:
    """A related place with 1-based columns (characters; UTF-8 bytes in another file whose
    text is not at hand)."""
    if related.path is None:
        return (shown_path, related.line, lines.char_column(related.line, related.col) + 1, related.end_line,
                lines.char_column(related.end_line, related.end_col) + 1, related.message)
    if related.lines is not None:
        other = related.lines
        return (related.path, related.line, other.char_column(related.line, related.col) + 1, related.end_line,
                other.char_column(related.end_line, related.end_col) + 1, related.message)
    return (related.path, related.line, related.col + 1, related.end_line, related.end_col + 1, related.message)


# -- check output formats ---------------------------------------------------------------
def render_text(problems: list[Problem], rules: Mapping[str, type[Rule]]) -> str:
    return "".join(f"{p.path}:{_cell_prefix(p)}{p.line}:{p.column}: {p.code} {p.message}\n" for p in problems)


def _cell_prefix(problem: Problem) -> str:
    return f"cell {problem.cell}:" if problem.cell is not None else ""


def render_json(problems: list[Problem], rules: Mapping[str, type[Rule]]) -> str:
    return json.dumps([p.as_json() for p in problems], indent=2, ensure_ascii=False) + "\n"


def render_github(problems: list[Problem], rules: Mapping[str, type[Rule]]) -> str:
    """GitHub Actions workflow commands: each problem becomes an annotation on the diff."""
    return "".join(
        f"::{GITHUB_COMMANDS.get(p.severity, 'notice')} file={_github_property(p.path)},line={p.line},"
        f"col={p.column},endLine={p.end_line},endColumn={p.end_column},title={_github_property(_github_title(p))}"
        f"::{_github_data(p.message)}\n"
        for p in problems
    )


def _github_title(problem: Problem) -> str:
    """The rule code; in a notebook also the cell, since the line counts within it."""
    return f"{problem.code} (cell {problem.cell})" if problem.cell is not None else problem.code


def _github_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _github_property(text: str) -> str:
    return _github_data(text).replace(":", "%3A").replace(",", "%2C")


def render_sarif(problems: list[Problem], rules: Mapping[str, type[Rule]]) -> str:
    """A SARIF 2.1.0 log with one run: the rule catalogue and the results."""
    descriptors = [_sarif_rule(rule) for rule in rules.values()] + [_SYNTAX_ERROR_DESCRIPTOR]
    index = {descriptor["id"]: i for i, descriptor in enumerate(descriptors)}
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "torch-lsp",
                        "version": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": descriptors,
                    }
                },
                "columnKind": "unicodeCodePoints",
                "originalUriBaseIds": {"%SRCROOT%": {"uri": Path.cwd().as_uri().rstrip("/") + "/"}},
                "results": [_sarif_result(p, index) for p in problems],
            }
        ],
    }
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


_SYNTAX_ERROR_DESCRIPTOR = {
    "id": SYNTAX_ERROR_CODE,
    "name": SYNTAX_ERROR_CODE,
    "shortDescription": {"text": "The file does not parse as Python; the rest of it is still checked."},
    "defaultConfiguration": {"level": "error"},
}


def _sarif_rule(rule: type[Rule]) -> dict:
    documentation = rule.documentation()
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary()},
        "fullDescription": {"text": _section(documentation, "What it does") or rule.summary()},
        "help": {"text": documentation, "markdown": documentation},
        "helpUri": rule_url(rule.code),
        "defaultConfiguration": {
            "level": SARIF_LEVELS[rule.severity],
            "enabled": bool(rule.enabled_by_default),
        },
        "properties": {"fixSafety": rule.fix_safety, "severity": rule.severity},
    }


def _sarif_result(problem: Problem, index: Mapping[str, int]) -> dict:
    result = {
        "ruleId": problem.code,
        "level": SARIF_LEVELS.get(problem.severity, "warning"),
        "message": {"text": problem.message},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": _sarif_artifact(problem.path),
                    "region": {
                        "startLine": problem.line,
                        "startColumn": problem.column,
                        "endLine": problem.end_line,
                        "endColumn": problem.end_column,
                    },
                }
            }
        ],
        "properties": {"severity": problem.severity},
    }
    if problem.code in index:
        result["ruleIndex"] = index[problem.code]
    if problem.cell is not None:
        # The region's lines count within the notebook's cell (the file's text is JSON).
        result["properties"]["cell"] = problem.cell
    if problem.fix:
        result["properties"]["fix"] = {"title": problem.fix.title, "safety": problem.fix.safety}
    if problem.related:
        result["relatedLocations"] = [
            {"id": number, "message": {"text": message}, "physicalLocation": {
                "artifactLocation": _sarif_artifact(path),
                "region": {"startLine": line, "startColumn": column, "endLine": end_line, "endColumn": end_column}}}
            for number, (path, line, column, end_line, end_column, message, *_) in enumerate(problem.related)
        ]
    return result


def _sarif_artifact(path: str) -> dict:
    if os.path.isabs(path):
        return {"uri": Path(path).as_uri()}
    return {"uri": quote(Path(path).as_posix()), "uriBaseId": "%SRCROOT%"}


FORMATS: dict[str, Callable[[list[Problem], Mapping[str, type[Rule]]], str]] = {
    "text": render_text,
    "json": render_json,
    "sarif": render_sarif,
    "github": render_github,
}


# -- the rule catalogue -------------------------------------------------------------------
def rule_url(code: str) -> str:
    return f"{DOCS_URL}#{code.lower()}"


def _section(documentation: str, title: str) -> str:
    """The text of one `## title` section of a rule's documentation."""
    marker = f"## {title}"
    if marker not in documentation:
        return ""
    body = documentation.split(marker, 1)[1]
    return body.split("\n## ", 1)[0].strip()


def _severity_cell(rule: type[Rule], off_note: str) -> str:
    return rule.severity if rule.enabled_by_default else f"{rule.severity} {off_note}"


def rules_table(rules: Iterable[type[Rule]]) -> str:
    """An aligned table: code, name, severity, fix safety and summary of each rule."""
    rows = [("CODE", "NAME", "SEVERITY", "FIX", "SUMMARY")]
    rows += [(r.code, r.name, _severity_cell(r, "(off)"), r.fix_safety, r.summary()) for r in rules]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    return "".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row[:4], widths)) + "  " + row[4] + "\n" for row in rows
    )


def rule_page(rule: type[Rule]) -> str:
    """What `torch-lsp rules TL301` prints."""
    default = "" if rule.enabled_by_default else " · off by default (select it by its code)"
    return (
        f"{rule.code} {rule.name}\n"
        f"severity: {rule.severity} · fix: {rule.fix_safety}{default}\n"
        f"{rule_url(rule.code)}\n\n"
        f"{rule.documentation()}\n"
    )


DOCS_PAGE_COMMAND = "torch-lsp rules --format markdown > docs/rules.md"


def rules_markdown(rules: Mapping[str, type[Rule]]) -> str:
    """The docs page checked in as docs/rules.md, one section (anchor `#tl301`) per rule."""
    parts = [
        "# torch-lsp rules\n",
        f"<!-- Generated from the rule docstrings by `{DOCS_PAGE_COMMAND}`; do not edit by hand. -->\n",
        "Each rule has a code, a name, a default severity and a fix safety (*safe* fixes keep "
        "behaviour, *unsafe* ones change it). Select, ignore and re-grade rules with `select`, "
        "`extend-select`, `ignore`, `per-file-ignores` and `severity` in `[tool.torch-lsp]` of "
        "`pyproject.toml`; silence one line with `# noqa: TL301` (or a bare `# noqa`).\n",
        "| Code | Name | Severity | Fix | Summary |",
        "|---|---|---|---|---|",
    ]
    for rule in rules.values():
        summary = rule.summary().replace("|", "\\|")
        severity = _severity_cell(rule, "(off by default)")
        link = f"[{rule.code}](#{rule.code.lower()})"
        parts.append(f"| {link} | {rule.name} | {severity} | {rule.fix_safety} | {summary} |")
    parts.append("")
    for rule in rules.values():
        parts.append(rule_markdown(rule))
    return "\n".join(parts).rstrip("\n") + "\n"


def rule_markdown(rule: type[Rule]) -> str:
    default = "" if rule.enabled_by_default else " · off by default: enable it with its full code"
    return (
        f"## {rule.code}\n\n"
        f"**{rule.name}** · severity: {rule.severity} · fix: {rule.fix_safety}{default}\n\n"
        f"{_demoted_headings(rule.documentation())}\n"
    )


def _demoted_headings(markdown: str) -> str:
    """Headings one level down (a rule's `## Example` sits under the page's `## TL301`);
    lines inside fenced code blocks are left alone (`# comment` is Python there)."""
    out, in_fence = [], False
    for line in markdown.split("\n"):
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
        elif not in_fence and line.startswith("#"):
            line = "#" + line
        out.append(line)
    return "\n".join(out)

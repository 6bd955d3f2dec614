"""What a rule is and what it reports.

A rule is one small class with a code, a kebab-case name, a default severity, its
fix safety and a docstring (What it does / Why is this bad / Example / Use
instead).  `check` yields `Finding`s built from the shared facts of an
`Analysis`; positions are `ast` positions (1-based lines, UTF-8 byte columns) and
are converted for each client by the front ends.
"""
from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Iterator

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis

SEVERITIES = ("error", "warning", "information", "hint")
FIX_SAFETIES = ("safe", "unsafe", "none")


@dataclass(frozen=True)
class FixInfo:
    """A fix the rule can offer: its title (what it will do) and its safety."""

    title: str
    safety: str  # "safe" | "unsafe"


@dataclass(frozen=True)
class Related:
    """A place a finding points to: `path` None for the same file; `ast` positions."""

    path: str | None
    line: int
    col: int
    end_line: int
    end_col: int
    message: str
    # The other file's text as the check read it (a `LineIndex`), when at hand: its columns
    # are then converted like this file's; without it they stay UTF-8 bytes.
    lines: Any = field(default=None, compare=False, repr=False)

    @classmethod
    def at(cls, node: ast.AST, message: str, path: str | None = None) -> "Related":
        end_col = node.end_col_offset if node.end_col_offset is not None else node.col_offset
        return cls(path, node.lineno, node.col_offset, node.end_lineno or node.lineno, end_col, message)


@dataclass
class Finding:
    code: str
    message: str
    line: int  # 1-based
    col: int  # UTF-8 byte offset, 0-based (as `ast`)
    end_line: int
    end_col: int
    severity: str
    fix: FixInfo | None = None
    # Rule-specific detail a code action needs (kept JSON-friendly).
    data: dict = field(default_factory=dict)
    # What the finding depends on, resolved elsewhere (the eval() call, the optimizer's
    # construction, a decorator in another file): shown as LSP relatedInformation and in
    # JSON/SARIF output.
    related: list["Related"] = field(default_factory=list)
    # The same error where it happens, when that is another file: this file's call gives
    # that file's code the shapes that make it raise (the front ends show it there too).
    raised_in: "RaisedElsewhere | None" = None

    @property
    def sort_key(self) -> tuple:
        return (self.line, self.col, self.code)


@dataclass
class RaisedElsewhere:
    """A finding as the file where its error happens shows it: `finding`'s positions are in
    `path`, whose text as the check read it is `lines` (a `LineIndex`).  Silenced there, it
    is not shown there, and the command line, which reports it there when it checks that
    file, reports it nowhere (the call keeps its own finding when only the caller is checked)."""

    path: str
    lines: Any
    finding: Finding
    silenced: bool = False  # by a `# noqa` on the line that raises: shown in neither place


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[str]
    fix_safety: ClassVar[str] = "none"
    enabled_by_default: ClassVar[bool] = True
    # The fix exists only where an exact rewrite is known (the catalogue says "safe where ..."):
    # other findings of the rule come without one.
    fix_only_where_exact: ClassVar[bool] = False
    # Rules that read the shape pass (the costliest fact): the server sends them in a second
    # step (a second push, or a refresh for pull clients) so the others reach the editor sooner.
    needs_shapes: ClassVar[bool] = False
    # Rules that read the shape probe's report: run only once a front end has probed the file.
    needs_probe: ClassVar[bool] = False
    # Rules whose findings in one part of a file read facts of other parts (`rule_parts`):
    # run on the whole file at every edit, not part by part.  A rule reading the shape pass
    # runs part by part unless it says so too: a part's analysis reads the whole file's
    # shapes, which an unchanged part keeps while the shape pass takes its runs over.
    whole_file: ClassVar[bool] = False

    def check(self, analysis: "Analysis") -> Iterator[Finding]:
        raise NotImplementedError

    # -- helpers for subclasses ----------------------------------------------
    def finding(
        self,
        node: ast.AST,
        message: str,
        fix_title: str | None = None,
        *,
        end_node: ast.AST | None = None,
        data: dict | None = None,
    ) -> Finding:
        """A finding spanning `node` (through `end_node` when given)."""
        last = end_node or node
        fix = None
        if fix_title and self.fix_safety in ("safe", "unsafe"):
            fix = FixInfo(fix_title, self.fix_safety)
        return Finding(
            code=self.code,
            message=message,
            line=node.lineno,
            col=node.col_offset,
            end_line=last.end_lineno or node.lineno,
            end_col=last.end_col_offset if last.end_col_offset is not None else node.col_offset,
            severity=self.severity,
            fix=fix,
            data=data or {},
        )

    def finding_at(self, span: tuple[int, int, int, int], message: str, fix_title: str | None = None,
                   *, data: dict | None = None) -> Finding:
        """A finding on an explicit (line, col, end_line, end_col) span."""
        line, col, end_line, end_col = span
        fix = FixInfo(fix_title, self.fix_safety) if fix_title and self.fix_safety in ("safe", "unsafe") else None
        return Finding(self.code, message, line, col, end_line, end_col, self.severity, fix, data or {})

    @classmethod
    def documentation(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def summary(cls) -> str:
        """The first sentence of the 'What it does' section."""
        doc = cls.documentation()
        body = doc.split("## What it does", 1)[-1].strip().split("\n\n", 1)[0]
        return " ".join(body.split())

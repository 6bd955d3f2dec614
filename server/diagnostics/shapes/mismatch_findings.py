"""The findings of the shape pass's definite mismatches, for TL501 and TL503 alike.

A mismatch found in another file's code, reached through a call of this file, is reported
at that call (the message says where it raises) and carries the same error as the file
that raises shows it (`Finding.raised_in`): the language server shows it there too while
both files are open, and `torch-lsp check` on both reports it once, at the line that raises.
The two are linked both ways as related places.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from torch_lsp.diagnostics import is_suppressed
from torch_lsp.diagnostics.base import Finding, RaisedElsewhere, Related, Rule
from torch_lsp.shapes import infer_shapes

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis

RAISES_HERE = "raises here, with the shapes of this call"
CALLED_HERE = "the call that gives these shapes"


def mismatch_findings(rule: Rule, analysis: "Analysis", kind: str) -> Iterator[Finding]:
    """A finding of `rule` for each mismatch of this kind ("shape" or "dtype")."""
    for mismatch in infer_shapes(analysis).mismatches:
        if mismatch.kind != kind:
            continue
        span = (mismatch.line, mismatch.col, mismatch.end_line, mismatch.end_col)
        finding = rule.finding_at(span, mismatch.message)
        raised = mismatch.raised_in
        if raised is not None:
            there = (raised.line, raised.col, raised.end_line, raised.end_col)
            finding.related.append(Related(raised.path, *there, RAISES_HERE, lines=raised.lines))
            elsewhere = rule.finding_at(there, raised.message)
            elsewhere.related.append(Related(analysis.path, *span, CALLED_HERE, lines=analysis.lines))
            # A noqa comment for the code on the line that raises silences it there (the call keeps its own).
            silenced = is_suppressed(elsewhere, raised.lines.line_text(raised.line))
            finding.raised_in = RaisedElsewhere(raised.path, raised.lines, elsewhere, silenced)
        yield finding

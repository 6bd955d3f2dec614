"""Errors that a call in one open document proves in another: shown in both, kept fresh.

`train.py` builds `Net()` and calls it with a [16, 3, 64, 64] batch; `Net.forward` in
`model.py` then gives its `fc` more features than it takes.  `train.py`'s check reports
that at the call (TL501) and carries the same error as `model.py` shows it
(`Finding.raised_in`).  Here that becomes a `CallerProof`, kept with the caller's checked
version, and the diagnostics of `model.py` are its own plus the proofs of the other open
documents, each linked to its call as related information (and the call's diagnostic to
the line that raises).

A proof holds the text of the file it points into as the caller's check read it: it is
shown only while that file still has that text, so a position never lands on an edited
line.  An edit of `model.py` re-checks its importers (`lsp.recheck_importers`); their new
proofs then replace the old ones, and `model.py` is published again (or refreshed, for a
client that pulls).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterable

from attrs import evolve
from lsprotocol import types as lsp

from torch_lsp.protocol import ast_range, to_diagnostic


@dataclass(frozen=True)
class CallerProof:
    """An error that the caller's call makes a line of the file at `path` raise."""

    path: str  # absolute
    source: str  # that file's text as the caller's check read it: the positions refer to it
    diagnostic: lsp.Diagnostic  # in that file, the call as its related information


def proofs_of(findings, uri: str, lines, encoding: str) -> tuple[CallerProof, ...]:
    """The proofs among a check's findings (`lines`: the caller's text; `uri`: its document)."""
    proofs = []
    for finding in findings:
        raised = finding.raised_in
        if raised is None or raised.silenced:
            continue
        diagnostic = to_diagnostic(raised.finding, raised.lines, encoding)
        calls = [lsp.DiagnosticRelatedInformation(
            lsp.Location(uri, ast_range(r.line, r.col, r.end_line, r.end_col, lines, encoding)), r.message)
            for r in raised.finding.related]
        proofs.append(CallerProof(os.path.abspath(raised.path), raised.lines.source,
                                  evolve(diagnostic, related_information=calls or None)))
    return tuple(proofs)


def proven_in(path: str, text: str, own: list[lsp.Diagnostic],
              callers: Iterable[tuple[CallerProof, ...]]) -> list[lsp.Diagnostic]:
    """The diagnostics that callers' proofs add to the document at `path` with this `text`:
    one per range and code (the calls of every caller as its related information), none
    where the document's own check already reports the same."""
    target = os.path.abspath(path)
    reported = {_place(diagnostic) for diagnostic in own}
    added: dict[tuple, lsp.Diagnostic] = {}
    for proofs in callers:
        for proof in proofs:
            if proof.path != target or proof.source != text:
                continue
            place = _place(proof.diagnostic)
            if place in reported:
                continue
            earlier = added.get(place)
            added[place] = proof.diagnostic if earlier is None else evolve(
                earlier, related_information=(earlier.related_information or [])
                + (proof.diagnostic.related_information or []))
    return list(added.values())


def proofs_key(diagnostics: list[lsp.Diagnostic]) -> str:
    """A short key that changes when the proven diagnostics do (part of a pull's result id)."""
    if not diagnostics:
        return "0"
    described = tuple((d.message, _place(d), tuple((r.location.uri, r.location.range.start.line,
                                                    r.location.range.start.character)
                                                   for r in d.related_information or ()))
                      for d in diagnostics)
    return f"{len(diagnostics)}-{hash(described) & 0xFFFFFFFF:08x}"


def targets(proofs: Iterable[CallerProof]) -> set[str]:
    return {proof.path for proof in proofs}


def _place(diagnostic: lsp.Diagnostic) -> tuple:
    r = diagnostic.range
    return (r.start.line, r.start.character, r.end.line, r.end.character, diagnostic.code)

"""Facts about single top-level statements, kept from one version of a document to the next.

A version parsed as an edit of the previous one (`torch_lsp.incremental_parse`) holds the
previous tree's own statement objects for every top-level statement the edit did not
touch, and no node is ever changed in place: a fact computed from one statement's subtree
alone (its nodes and their positions, nothing else in the file) therefore holds in every
version that shares the statement object.  File-wide facts that are a merge of such
per-statement parts (the name scan, TL702's uses) compute only the parts of the
statements an edit touched, then merge; what depends on the rest of the file (which
names the imports bind) is applied in the merge, never stored per statement, or stored
with those file-wide facts and used only while they stay the same (`each_under`).
"""
from __future__ import annotations

import ast
from collections.abc import Hashable
from typing import Any, Callable, TypeVar

from torch_lsp.fact_cache import FactKey

T = TypeVar("T")


class StatementFacts:
    """Per top-level statement of one version's tree: facts computed on first use, or
    taken over from the `previous` version when it holds the very same statement object."""

    def __init__(self, tree: ast.Module, previous: "StatementFacts | None" = None) -> None:
        self._statements = tree.body
        kept = previous._facts if previous is not None else {}
        # Keyed by the statement's id, with the statement kept alongside so that an id is
        # never reused for another object while the entry lives.  Only this version's
        # statements are taken over: no chain of versions is kept alive.
        self._facts: dict[int, tuple[ast.stmt, dict[FactKey[Any], Any]]] = {}
        for statement in self._statements:
            old = kept.get(id(statement))
            self._facts[id(statement)] = old if old is not None and old[0] is statement else (statement, {})

    def each(self, key: FactKey[T], compute: Callable[[ast.stmt], T]) -> list[T]:
        """`compute(statement)` for every top-level statement, in source order; computed once
        per statement object, whichever version asks first."""
        values = []
        for statement in self._statements:
            facts = self._facts[id(statement)][1]
            if key in facts:
                values.append(facts[key])
            else:
                value = facts[key] = compute(statement)
                values.append(value)
        return values

    def kept(self, statement: ast.stmt, key: FactKey[T]) -> T | None:
        """The value of `key` kept for `statement` (`keep`), None when there is none."""
        return self._facts[id(statement)][1].get(key)

    def keep(self, statement: ast.stmt, key: FactKey[T], value: T) -> None:
        """Keep `value` for `statement` under `key`, for this version and the later ones that
        share the statement object: a fact computed where the statement's turn comes (in a
        walk in source order), not on first use."""
        self._facts[id(statement)][1][key] = value

    def each_under(self, key: FactKey[T], file_facts: Hashable, compute: Callable[[ast.stmt], T]) -> list[T]:
        """`each`, for a fact that also reads file-wide facts (what the imports bind, which
        names the file rebinds): kept while a later version's `file_facts` are equal, computed
        again where they are not.  Pass the same objects from version to version where they
        are unchanged: tuples then compare by identity, not element by element.

        A statement keeps its value under a few file facts at once: the whole file's analysis
        and the analysis of the part holding the statement (`rule_parts`) read it under
        different ones, version after version, and one value each would only replace the
        other's."""
        values = []
        for statement in self._statements:
            facts = self._facts[id(statement)][1]
            variants = facts.get(key)
            value = _MISSING
            if variants is not None:
                for kept_under, kept in variants:
                    if kept_under is file_facts or kept_under == file_facts:
                        value = kept
                        break
            if value is _MISSING:
                value = compute(statement)
                # A new list, set at once: a version checked beside this one never reads a
                # half-made one.
                facts[key] = [(file_facts, value), *(variants or ())][:_VARIANTS_KEPT]
            values.append(value)
        return values

    def kept_file_facts(self, key: FactKey[Any], file_facts: Hashable) -> Hashable:
        """The file facts equal to `file_facts` that a value of `key` was kept under
        (`each_under`), found on the first statement that has one, else `file_facts`: a
        version compares its own with them once, and passes the kept objects on, which the
        statements then compare by identity."""
        for statement in self._statements:
            variants = self._facts[id(statement)][1].get(key)
            if variants:
                return next((kept_under for kept_under, _ in variants if kept_under == file_facts), file_facts)
        return file_facts


_MISSING = object()
# File facts a statement keeps a value under at once (the whole file's, its part's, and one more).
_VARIANTS_KEPT = 3

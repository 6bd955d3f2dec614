"""The notebook corpus: every rule fixture (`tests/rules/fixtures/TLxxx.py`) written as a
Jupyter notebook the way people write them.

The fixture is cut into code cells before top-level statements (a cell per function,
class or group of statements), with markdown cells between them, IPython lines added
(`!pip install`, `%matplotlib inline`, `%%time` as a cell magic, `model?` help), some
cells without their final line break, and sources stored both as a list of lines
and as one string.  `CorpusNotebook.place` says where each line of the fixture went
(cell number counting every cell from 1, line within the cell), so that what the
checker reports in the notebook can be compared with what it reports in the file.
"""
from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from pathlib import Path

# IPython lines put at the top of some cells: (line, None) or, for a cell magic, its first line.
ADDED_FIRST_LINES = ["!pip install -q torch torchvision", "%matplotlib inline", "%%time", "%load_ext autoreload"]
HELP_LINE = "torch.nn.Module?"


@dataclass
class CorpusNotebook:
    name: str
    cells: list[dict]
    place: dict[int, tuple[int, int]] = field(default_factory=dict)  # fixture line -> (cell, line in cell)
    added_lines: dict[int, set[int]] = field(default_factory=dict)  # cell -> its added IPython lines
    stripped_break: set[int] = field(default_factory=set)  # cells whose final line break was dropped

    def document(self) -> dict:
        return {
            "cells": self.cells,
            "metadata": {
                "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                "language_info": {"name": "python", "version": "3.11.7"},
            },
            "nbformat": 4,
            "nbformat_minor": 5,
        }

    def text(self, **style) -> str:
        """The file as Jupyter writes it (indent 1, no ASCII escapes, final line break),
        or in another `json.dumps` style."""
        style = style or {"indent": 1, "ensure_ascii": False}
        return json.dumps(self.document(), **style) + "\n"

    def fixture_text_of(self, document: dict) -> str:
        """The fixture's text back from a notebook document: code cells joined, the added
        IPython lines removed, dropped line breaks restored."""
        parts = []
        for number, cell in enumerate(document["cells"], start=1):
            if cell["cell_type"] != "code":
                continue
            source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
            lines = source.split("\n")
            kept = [line for index, line in enumerate(lines, start=1) if index not in self.added_lines.get(number, ())]
            text = "\n".join(kept)
            parts.append(text + "\n" if number in self.stripped_break else text)
        return "".join(parts)


def cut_lines(source: str) -> list[int]:
    """The 1-based lines where a cell starts: before top-level definitions and after
    them, so that statements between definitions get cells of their own."""
    tree = ast.parse(source)
    starts = {1}
    for node in tree.body:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.For, ast.While, ast.With)):
            starts.add(first)
            starts.add(node.end_lineno + 1)
    total = source.count("\n") + 1
    return sorted(line for line in starts if line <= total)


def corpus_notebook(fixture: Path) -> CorpusNotebook:
    source = fixture.read_text(encoding="utf-8")
    lines = source.splitlines(keepends=True)
    starts = cut_lines(source)
    notebook = CorpusNotebook(fixture.stem, [])
    bounds = list(zip(starts, starts[1:] + [len(lines) + 1]))
    for piece, (first, end) in enumerate(bounds):
        body = lines[first - 1:end - 1]
        if not body:
            continue
        if piece % 2 == 1:
            notebook.cells.append(_markdown(f"Step {piece} of {fixture.stem}", piece))
        number = len(notebook.cells) + 1
        added = _added_lines(piece)
        if piece == 0:
            added = ["!pip install -q torch torchvision"]
        notebook.added_lines[number] = set(range(1, len(added) + 1))
        for offset in range(end - first):
            notebook.place[first + offset] = (number, len(added) + offset + 1)
        text = "".join(line + "\n" for line in added) + "".join(body)
        if piece == len(bounds) - 1 and piece > 0:
            text = (text if text.endswith("\n") else text + "\n") + HELP_LINE + "\n"
            notebook.added_lines[number].add(len(added) + len(body) + 1)
        if piece % 3 == 1 and text.endswith("\n"):
            text = text[:-1]
            notebook.stripped_break.add(number)
        notebook.cells.append(_code(text, as_lines=piece % 4 != 2, count=piece + 1))
    return notebook


def _added_lines(piece: int) -> list[str]:
    if piece % 5 == 2:
        return ["%%time"]
    if piece % 5 == 3:
        return ["%matplotlib inline", "!nvidia-smi"]
    return []


def _markdown(text: str, piece: int) -> dict:
    return {"cell_type": "markdown", "id": f"markdown-{piece:04d}", "metadata": {}, "source": [text]}


def _code(text: str, as_lines: bool, count: int) -> dict:
    source = text.splitlines(keepends=True) if as_lines else text
    return {
        "cell_type": "code",
        "execution_count": count,
        "id": f"cell-{count:04d}",
        "metadata": {"scrolled": True, "tags": ["ünïcode"]},
        "outputs": [{"name": "stdout", "output_type": "stream", "text": [f"step {count}: loss 0.25, lr 1e-05\n"]},
                    {"data": {"text/plain": ["tensor([1.5000, 2.0000])"]}, "execution_count": count,
                     "metadata": {}, "output_type": "execute_result"}],
        "source": source,
    }

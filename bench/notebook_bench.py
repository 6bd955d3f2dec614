"""Timings of notebooks: the generated file cut into code cells as a notebook would hold
it, joined into one program (what the server does again on each keystroke in a cell,
and `check` once per `.ipynb`), and checked."""
from __future__ import annotations

import ast
from pathlib import Path

from bench.check_bench import best_of_median
from bench.figures import Row, lines_label, ms


def cells_of(source: str) -> list[str]:
    """The source cut into cells before each top-level statement, with a line magic on
    every third cell, as notebooks are written."""
    lines = source.splitlines(keepends=True)
    starts = sorted({1} | {node.lineno for node in ast.parse(source).body})
    bounds = zip(starts, starts[1:] + [len(lines) + 1])
    cells = ["".join(lines[first - 1:end - 1]) for first, end in bounds]
    return [("%time\n" if index % 3 == 0 else "") + cell for index, cell in enumerate(cells) if cell]


def notebook_rows(path: Path, size: int, parse_seconds: float, runs: int) -> list[Row]:
    from torch_lsp import notebook_magics
    from torch_lsp.checker import check_source
    from torch_lsp.notebooks import notebook_program

    cells = list(enumerate(cells_of(path.read_text(encoding="utf-8")), start=1))
    label = f"{lines_label(size)}, {len(cells)} cells"

    def first_join():
        notebook_magics.mask_magics.cache_clear()
        return notebook_program(cells)

    program = notebook_program(cells)
    source = path.read_text(encoding="utf-8")
    as_file = best_of_median(lambda: check_source(source, str(path)), runs)
    return [
        Row("notebook: join cells into one program", label, ms(best_of_median(first_join, runs)),
            f"after a keystroke (masks cached): {ms(best_of_median(lambda: notebook_program(cells), runs))}"),
        Row("notebook: check_source on the program", label,
            ms(seconds := best_of_median(lambda: check_source(program.source, "bench.ipynb"), runs)),
            f"{seconds / parse_seconds:.1f}x ast.parse; the same code as one file: {ms(as_file)}"),
    ]

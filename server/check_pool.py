"""`torch-lsp check` over many files on every core.

Each file is read and checked in a worker process and comes back as a `FileOutcome`:
the problems found, or why it was skipped, or the traceback of an internal error, in
the order the files were given (the report does not depend on the number of cores).
Workers are forked where the platform allows it, so they start with the rules already
imported; below `MIN_FILES` files, or with one core, the files are checked in the
process itself, which costs nothing to start.
"""
from __future__ import annotations

import multiprocessing
import os
import sys
import traceback
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

MIN_FILES = 8  # fewer files are checked faster than worker processes start
FILES_PER_TASK = 4  # files sent to a worker at once: fewer round trips, still balanced


@dataclass
class FileOutcome:
    """What checking one file gave: `problems` (reporting.Problem), or `skipped` (the
    sentence saying why it could not be read), or `internal_error` (a traceback)."""

    shown: str
    problems: list = field(default_factory=list)
    skipped: str | None = None
    internal_error: str | None = None
    broken_notebook: bool = False  # skipped because the notebook is not one (invalid JSON, ...)


def worker_count(files: int, jobs: int | None) -> int:
    """How many worker processes check `files` files (`jobs`: the user's cap, None for
    every core); 0 means in this process."""
    cores = jobs if jobs is not None else (os.cpu_count() or 1)
    if cores <= 1 or files < MIN_FILES:
        return 0
    return min(cores, files // 2)


def check_files(files: list[tuple[Path, object]], workers: int) -> Iterator[FileOutcome]:
    """The outcome of each (file, settings), in order; `workers` from `worker_count`."""
    if workers == 0:
        for path, settings in files:
            yield check_file(path, settings)
        return
    context = multiprocessing.get_context("fork") if sys.platform.startswith("linux") else None
    with ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_start_worker,
                             initargs=(os.getcwd(),)) as pool:
        paths = [path for path, _ in files]
        settings = [settings for _, settings in files]
        yield from pool.map(check_file, paths, settings, chunksize=FILES_PER_TASK)


def check_file(path: Path, settings) -> FileOutcome:
    """Read and check one file, a notebook's code cells as one program (in a worker, or in
    this process)."""
    from torch_lsp.checker import check_source
    from torch_lsp.files import UnreadableFile
    from torch_lsp.notebook_files import InvalidNotebook, read_checked_source
    from torch_lsp.reporting import problems_of

    shown = str(path)
    try:
        source, program = read_checked_source(path)
    except InvalidNotebook as error:
        return FileOutcome(shown, skipped=str(error), broken_notebook=True)
    except UnreadableFile as error:
        return FileOutcome(shown, skipped=str(error))
    try:
        return FileOutcome(shown, problems_of(check_source(source, shown, settings), shown, program))
    except Exception:  # noqa: BLE001 - one bad file must not hide the others' results
        return FileOutcome(shown, internal_error=traceback.format_exc())


def _start_worker(folder: str) -> None:
    """A worker follows imported model classes the way the command itself does."""
    from torch_lsp.shapes import WorkspaceResolver, set_default_resolver

    set_default_resolver(WorkspaceResolver([folder]))

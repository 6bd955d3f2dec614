"""One character typed inside a function of a large file, and how soon the server answers
it: edit -> first publish (a push client; the adaptive debounce included), and edit ->
complete diagnostics (a pull client asking right after the edit; the answer holds every
rule's findings, the shape rules' included).

Each figure is measured twice in the same run, edits alternating between two servers:
one checking incrementally (as shipped) and one with `TORCH_LSP_INCREMENTAL=0`, which
parses and debounces the whole-file way, the "before" of the same code.  The yardstick is
`ast.parse` of the edited texts, timed in this process between the edits.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from bench import check_bench, server_bench
from bench.generate import generate_source

MODES = {"incremental": {}, "whole-file": {"TORCH_LSP_INCREMENTAL": "0"}}


@dataclass
class EditFigures:
    lines: int
    parse: list[float] = field(default_factory=list)  # seconds of ast.parse of the edited texts
    first_publish: dict[str, list[float]] = field(default_factory=dict)  # by mode: edit -> first publish
    complete: dict[str, list[float]] = field(default_factory=dict)  # by mode: edit -> pull answer


def measure(root: Path, data_dir: Path, sizes: list[int], edits: int) -> list[EditFigures]:
    sessions = {}
    try:
        for mode, env in MODES.items():
            for pulls in (False, True):
                log = data_dir / f"server-stderr-edit-{mode}-{'pull' if pulls else 'push'}.log"
                sessions[mode, pulls] = server_bench.start_session(root, log, pulls=pulls, env=env)
        return [_measure_size(sessions, data_dir, size, edits) for size in sizes]
    finally:
        for session in sessions.values():
            session.client.shutdown()


def _measure_size(sessions: dict, data_dir: Path, size: int, edits: int) -> EditFigures:
    text = generate_source(size, variant=900 + size)
    line, character = server_bench.typing_position(text)
    paths = {}
    for (mode, pulls), session in sessions.items():
        path = paths[mode, pulls] = data_dir / f"edit_{size}_{mode}_{'pull' if pulls else 'push'}.py"
        path.write_text(text, encoding="utf-8")
        if pulls:
            server_bench.open_and_pull(session, path, text)
        else:
            server_bench.open_document(session, path, text)
    figures = EditFigures(size, first_publish={mode: [] for mode in MODES}, complete={mode: [] for mode in MODES})
    for edit in range(edits):
        insert = edit % 2 == 0
        for mode in MODES:  # alternating: the machine's load weighs on both alike
            push, pull = sessions[mode, False], sessions[mode, True]
            figures.first_publish[mode].append(
                server_bench.type_one_character(push, paths[mode, False], line, character, insert))
            figures.complete[mode].append(server_bench.type_and_pull(pull, paths[mode, True], line, character, insert))
        edited = sessions["incremental", False].documents[paths["incremental", False].as_uri()].text
        figures.parse.append(check_bench.ast_parse_seconds(edited, 3))
    return figures


def check_costs(size: int, runs: int) -> dict[str, float]:
    """Where the check of one typed character goes, in process, checked as an edit of the
    previous version (as the server does, its shape pass taking over the unchanged parts): parsing and the eager facts (`analyze`), every
    rule but the shape rules, and the shape pass with the shape rules; in seconds."""
    from torch_lsp.analysis import analyze
    from torch_lsp.checker import add_shape_findings, check_source, collector_paused
    from torch_lsp.shapes.components import forget_parts, keeping_parts

    text = generate_source(size, variant=900 + size)
    line, character = server_bench.typing_position(text)
    lines = text.split("\n")
    lines[line] = lines[line][:character] + "x" + lines[line][character:]
    edited = "\n".join(lines)
    document = "bench:check_costs"
    with collector_paused(), keeping_parts(document):  # as the server checks an open document
        previous = add_shape_findings(check_source(text, shapes=False)).analysis.parsed  # its parts are kept
        analysed = check_bench.best_of_median(lambda: analyze(edited, previous=previous), runs)
        first = check_bench.best_of_median(lambda: check_source(edited, shapes=False, previous=previous), runs)
        complete = check_bench.best_of_median(
            lambda: add_shape_findings(check_source(edited, shapes=False, previous=previous)), runs)
        parse = check_bench.ast_parse_seconds(edited, runs)
    forget_parts(document)
    return {"ast.parse": parse, "analyze": analysed, "rules": max(first - analysed, 0.0),
            "shapes": max(complete - first, 0.0)}

"""The notebook corpus (`tests/notebooks/corpus.py`) through the real CLI.

Every rule fixture is checked twice in one run, as `TLxxx.py` and as the notebook
`TLxxx.ipynb` cut from it: each rule fires in the notebook at the cell and line where
the fixture's `# expect:` markers went, and every finding of the file appears in the
notebook at the same place, with the same column and message (a "line 12" in it said
as "line 2 of cell 3").  `--fix` on both gives the same code, and the notebook file is
byte for byte what it was apart from the fixed cells' sources.
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from torch_lsp.diagnostics import all_rules
from tests.notebooks.corpus import corpus_notebook
from tests.rules.markers import read_markers

FIXTURES = Path(__file__).parents[1] / "rules" / "fixtures"
# TL502 reads the shape probe's report, which `check --probe` makes; test_notebooks_cli covers it.
CORPUS = sorted(p for p in FIXTURES.glob("TL*.py") if p.stem in all_rules() and not all_rules()[p.stem].needs_probe)
EVERY_RULE = ",".join(all_rules())
# A second style of notebook file: what other tools write.
OTHER_STYLE = {"indent": 2, "sort_keys": True, "ensure_ascii": True}
PROGRAM_LINE = re.compile(r"(?<!\.py, )\bline (\d+)\b")


def build(folder: Path) -> dict[str, object]:
    notebooks = {}
    for fixture in CORPUS:
        notebook = corpus_notebook(fixture)
        shutil.copy(fixture, folder / fixture.name)
        (folder / f"{fixture.stem}.ipynb").write_text(notebook.text(), encoding="utf-8")
        (folder / f"{fixture.stem}_other_style.ipynb").write_text(notebook.text(**OTHER_STYLE)[:-1],
                                                                   encoding="utf-8")
        notebooks[fixture.stem] = notebook
    return notebooks


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus")
    notebooks = build(folder)
    from tests.conftest import run_cli

    completed = run_cli("check", "--format", "json", "--select", EVERY_RULE, ".", cwd=folder, timeout=600)
    assert completed.returncode == 1, completed.stderr
    by_path: dict[str, list[dict]] = {}
    for item in json.loads(completed.stdout):
        by_path.setdefault(item["path"], []).append(item)
    return notebooks, by_path


@pytest.fixture(scope="module")
def fixed(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus_fixed")
    notebooks = build(folder)
    originals = {p.name: p.read_text(encoding="utf-8") for p in folder.iterdir()}
    from tests.conftest import run_cli

    completed = run_cli("check", "--fix", "--unsafe-fixes", "--select", EVERY_RULE, ".", cwd=folder, timeout=600)
    assert completed.returncode in (0, 1), completed.stderr
    return notebooks, folder, originals


def in_cell(notebook, item: dict) -> tuple:
    """A finding of the file, placed where the notebook holds its line."""
    cell, line = notebook.place[item["line"]]
    end_cell, end_line = notebook.place[item["end_line"]]
    assert end_cell == cell

    def cell_terms(match: re.Match) -> str:
        where, local = notebook.place[int(match.group(1))]
        return f"line {local} of cell {where}"

    return (item["code"], cell, line, item["column"], end_line, item["end_column"],
            PROGRAM_LINE.sub(cell_terms, item["message"]))


def as_reported(item: dict) -> tuple:
    return (item["code"], item["cell"], item["line"], item["column"], item["end_line"], item["end_column"],
            item["message"])


@pytest.mark.parametrize("fixture", CORPUS, ids=lambda p: p.stem)
def test_each_rule_fires_in_the_cell_and_line_of_its_markers(checked, fixture: Path):
    notebooks, by_path = checked
    notebook = notebooks[fixture.stem]
    expects, _ = read_markers(fixture)
    expected = {notebook.place[line] for line, codes in expects.items() if fixture.stem in codes}
    assert expected
    reported = {(item["cell"], item["line"]) for item in by_path[f"{fixture.stem}.ipynb"]
                if item["code"] == fixture.stem}
    assert sorted(expected - reported) == [], "missed in the notebook"
    assert sorted(reported - expected) == [], "reported where the fixture expects nothing"


@pytest.mark.parametrize("fixture", CORPUS, ids=lambda p: p.stem)
def test_the_notebook_gets_every_finding_of_the_file_in_cell_coordinates(checked, fixture: Path):
    notebooks, by_path = checked
    notebook = notebooks[fixture.stem]
    in_file = sorted(in_cell(notebook, item) for item in by_path.get(fixture.name, []))
    in_notebook = sorted(as_reported(item) for item in by_path.get(f"{fixture.stem}.ipynb", []))
    assert in_notebook == in_file
    other_style = sorted(as_reported(item) for item in by_path.get(f"{fixture.stem}_other_style.ipynb", []))
    assert other_style == in_file


@pytest.mark.parametrize("fixture", CORPUS, ids=lambda p: p.stem)
def test_fix_rewrites_the_cells_like_the_file_and_keeps_every_other_byte(fixed, fixture: Path):
    notebooks, folder, originals = fixed
    notebook = notebooks[fixture.stem]
    fixed_file = (folder / fixture.name).read_text(encoding="utf-8")
    for name, style, ending in ((f"{fixture.stem}.ipynb", {"indent": 1, "ensure_ascii": False}, "\n"),
                                (f"{fixture.stem}_other_style.ipynb", OTHER_STYLE, "")):
        text = (folder / name).read_text(encoding="utf-8")
        document = json.loads(text)
        assert notebook.fixture_text_of(document) == fixed_file, name
        # Every other byte as it was: the file is exactly what its own style writes for the
        # fixed document, and nothing but code cells' sources differs from the original.
        assert text == json.dumps(document, **style) + ending, name
        original = json.loads(originals[name])
        for before, after in zip(original["cells"], document["cells"], strict=True):
            assert {k: v for k, v in before.items() if k != "source"} == \
                   {k: v for k, v in after.items() if k != "source"}
            if before["cell_type"] != "code":
                assert before == after
        assert {k: v for k, v in original.items() if k != "cells"} == {k: v for k, v in document.items()
                                                                       if k != "cells"}
    if fixed_file == originals[fixture.name]:
        assert (folder / f"{fixture.stem}.ipynb").read_text(encoding="utf-8") == originals[f"{fixture.stem}.ipynb"]


def test_the_corpus_fixes_something():
    """The fix test above compares real rewrites, not only files left alone."""
    fixable = [p for p in CORPUS if all_rules()[p.stem].fix_safety in ("safe", "unsafe")]
    assert len(fixable) >= 10

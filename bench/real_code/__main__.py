"""`python -m bench.real_code --root DIR`: re-check the reviewed findings on real PyTorch code.

`verdicts.tsv` holds a reviewer's verdict on each finding torch-lsp reported on public
code (`source, path, line, code, verdict, why`; verdict is true, debatable or false);
a finding in a notebook has the path `NOTEBOOK.ipynb#CELL` (the cell's place among all
cells, as editors count) and its line within that cell.  `sources.tsv` names each source
and the commit that was reviewed.  No fetched code is kept here: put each source under
DIR as `owner+name/` (a checkout at that commit, or its *.py and *.ipynb files), and this
tool checks what is present, skips what is absent, and prints:

  * precision: of today's findings that have a verdict, how many are true, debatable, false;
  * regressions: findings judged false that are reported again, and findings judged true
    that are no longer reported (exit status 1 when there is either, with --strict);
  * findings with no verdict yet, to review (and add to verdicts.tsv).
"""
from __future__ import annotations

import argparse
import csv
import sys
from collections import Counter
from pathlib import Path

from torch_lsp.checker import check_source
from torch_lsp.diagnostics import all_rules
from torch_lsp.files import UnreadableFile
from torch_lsp.notebook_files import read_checked_source
from torch_lsp.settings import Selection, Settings

HERE = Path(__file__).parent
VERDICTS = HERE / "verdicts.tsv"
SOURCES = HERE / "sources.tsv"
MAX_BYTES = 2_000_000
# The product's defaults plus the off-by-default rules, so every rule's verdicts are re-checked.
EVERY_RULE = Settings().with_selection(Selection(select=tuple(all_rules())))


def read_tsv(path: Path) -> list[dict]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def source_folder(root: Path, source: str) -> Path:
    return root / source.replace("/", "+")


def findings_of(folder: Path) -> set[tuple[str, int, str]]:
    """(path relative to the source, line, code) of every finding in the folder's Python
    files and notebooks (a notebook's finding as `NOTEBOOK.ipynb#CELL` and its line there)."""
    found = set()
    for path in sorted(p for suffix in ("*.py", "*.ipynb") for p in folder.rglob(suffix)):
        try:
            source, notebook = read_checked_source(path)
        except UnreadableFile:  # too large for torch-lsp, or a notebook that is not one (nbformat 3)
            continue
        if len(source) > MAX_BYTES:  # the checked text: a notebook's outputs do not count
            continue
        relative = path.relative_to(folder).as_posix()
        for finding in check_source(source, str(path), EVERY_RULE).findings:
            if notebook is None:
                found.add((relative, finding.line, finding.code))
            else:
                cell, line = notebook.cell_line(finding.line)
                found.add((f"{relative}#{cell.number}", line, finding.code))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.real_code", description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", required=True, help="folder holding the sources as owner+name/")
    parser.add_argument("--strict", action="store_true", help="exit 1 on a regression")
    args = parser.parse_args(argv)
    root = Path(args.root)
    verdicts = read_tsv(VERDICTS)
    judged = {(v["source"], v["path"], int(v["line"]), v["code"]): v for v in verdicts}
    reported: dict[tuple, None] = {}
    present = []
    for source in (row["source"] for row in read_tsv(SOURCES)):
        folder = source_folder(root, source)
        if not folder.is_dir():
            print(f"skipped {source}: {folder} is absent")
            continue
        present.append(source)
        for path, line, code in findings_of(folder):
            reported[(source, path, line, code)] = None
    if not present:
        print("No source is present; nothing was checked.")
        return 0
    rules = all_rules()
    tally = Counter(judged[key]["verdict"] for key in reported if key in judged)
    by_code: dict[str, Counter] = {}
    for key in reported:
        if key in judged:
            by_code.setdefault(key[3], Counter())[judged[key]["verdict"]] += 1
    unjudged = sorted(key for key in reported if key not in judged)
    false_again = sorted(key for key in reported if judged.get(key, {}).get("verdict") == "false")
    true_lost = sorted(key for key, v in judged.items()
                       if v["verdict"] == "true" and key[0] in present and key not in reported)
    total = sum(tally.values())
    print(f"checked: {', '.join(present)}")
    print(f"findings: {len(reported)}, with a verdict: {total} "
          f"(true {tally['true']}, debatable {tally['debatable']}, false {tally['false']})")
    for title, on in (("rules on by default", True), ("rules off by default (opt-in)", False)):
        group = Counter()
        for code, counts in by_code.items():
            if code in rules and rules[code].enabled_by_default == on:
                group.update(counts)
        judged_here = sum(group.values())
        if judged_here:
            print(f"{title}: true {group['true']}, debatable {group['debatable']}, false {group['false']}; "
                  f"precision (true / judged) {group['true'] / judged_here:.1%}")
    print("per code (true/debatable/false): " + ", ".join(
        f"{code} {c['true']}/{c['debatable']}/{c['false']}" for code, c in sorted(by_code.items())))
    for title, keys in (("judged false, reported again", false_again),
                        ("judged true, no longer reported", true_lost),
                        ("no verdict yet", unjudged)):
        print(f"\n{title}: {len(keys)}")
        for source, path, line, code in keys:
            why = judged.get((source, path, line, code), {}).get("why", "")
            print(f"  {source} {path}:{line} {code} {why}".rstrip())
    return 1 if args.strict and (false_again or true_lost) else 0


if __name__ == "__main__":
    sys.exit(main())

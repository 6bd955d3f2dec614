"""`python -m bench.rule_parts_check DIR... [--files N] [--edits N] [--seed S]`: on real code,
an open document's checks, which re-run the rules only on the parts an edit changed
(`torch_lsp.rule_parts`), give the same findings as a check of each version from scratch.

It takes the `.py` files under the folders that split into parts and, for each:
- runs every part-local rule on each part alone (`part_analysis`) and on the whole file,
  and prints every finding only one of them gives (a rule reading across parts shows here,
  wherever its findings are);
- applies random edits inside functions that keep the file parseable (a statement
  replaced by `pass`, another line of the file copied in, a comment added), checks each
  version as the server does (the rules that read the shape pass in a second step) and
  from scratch, and prints every finding only one gives.
A difference means a rule reads across parts: read that through `Analysis.file_fact`, join
the parts it reads across in `rule_partition`, or mark the rule `whole_file`.  It never
asserts; the figures to read are the two "differences".
"""
from __future__ import annotations

import argparse
import ast
import os
import random
from collections import Counter

from torch_lsp.analysis import analyze, part_analysis
from torch_lsp.checker import add_shape_findings, check_source, collector_paused
from torch_lsp.diagnostics import run_rules
from torch_lsp.rule_parts import forget_rule_parts, rule_partition, whole_file
from torch_lsp.shapes.components import forget_parts, keeping_parts

MAX_BYTES = 200_000
_OPENS_A_BLOCK = (":", "(", "[", "{", ",", "\\")
# Lines that are no simple statement of a function body: not edited, not copied.
_NOT_EDITED = ("#", "@", "def ", "class ", "elif", "else", "except", "finally", ")", "]", "}")
_NOT_COPIED = _NOT_EDITED + ("return",)


def split_files(roots: list[str]) -> list[str]:
    """The PyTorch files under `roots` that parse and split into parts."""
    found = []
    for root in roots:
        for folder, subfolders, names in os.walk(root):
            subfolders[:] = sorted(d for d in subfolders if not d.startswith("."))
            for name in sorted(names):
                path = os.path.join(folder, name)
                if not name.endswith(".py") or os.path.getsize(path) > MAX_BYTES:
                    continue
                try:
                    text = open(path, encoding="utf-8").read()
                    analysis = analyze(text, path)
                except (OSError, UnicodeDecodeError):
                    continue
                if not analysis.syntax_errors and analysis.uses_torch and rule_partition(analysis):
                    found.append(path)
    return found


def edited_versions(text: str, rng: random.Random, count: int):
    """Up to `count` successive parseable versions, each one small edit inside a function."""
    lines = text.split("\n")
    for _ in range(count * 20):
        if count <= 0:
            return
        i = rng.randrange(len(lines))
        line, stripped = lines[i], lines[i].strip()
        if not line.startswith("    ") or not stripped or stripped.startswith(_NOT_EDITED) \
                or stripped.endswith(_OPENS_A_BLOCK):
            continue
        indent = line[:len(line) - len(line.lstrip())]
        new = list(lines)
        kind = rng.randrange(3)
        if kind == 0:
            new[i] = indent + "pass"
        elif kind == 1:
            other = lines[rng.randrange(len(lines))].strip()
            if not other or other.endswith(_OPENS_A_BLOCK) or other.startswith(_NOT_COPIED):
                continue
            new.insert(i, indent + other)
        else:
            new[i] = line + "  # edited"
        candidate = "\n".join(new)
        try:
            ast.parse(candidate)
        except SyntaxError:
            continue
        lines, count = new, count - 1
        yield candidate


def _key(finding) -> tuple:
    return (finding.code, finding.line, finding.col, finding.end_line, finding.end_col, finding.message,
            finding.severity)


def part_differences(path: str, text: str) -> list[tuple[str, tuple]]:
    """("whole file only" / "parts only", finding key) of each part-local finding that the
    whole file's run and the runs of its parts do not both give."""
    analysis = analyze(text, path)
    parts = rule_partition(analysis)
    local = lambda code: not whole_file(code)  # noqa: E731
    whole = {_key(f) for f in run_rules(analysis, local)}
    union = set()
    for indices, _ in parts or ():
        union |= {_key(f) for f in run_rules(part_analysis(analysis, [analysis.tree.body[i] for i in indices]), local)}
    return [("whole file only" if key in whole else "parts only", key) for key in sorted(whole ^ union)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("roots", nargs="+")
    parser.add_argument("--files", type=int, default=300, help="files checked, drawn at random (default 300)")
    parser.add_argument("--edits", type=int, default=4, help="successive edits per file (default 4)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    paths = split_files(args.roots)
    rng.shuffle(paths)
    differences: Counter[str] = Counter()
    part_differences_seen: Counter[str] = Counter()
    versions = 0
    for path in paths[:args.files]:
        text = open(path, encoding="utf-8").read()
        document = "rule-parts-check:" + path
        with collector_paused():
            for side, key in part_differences(path, text):
                part_differences_seen[key[0]] += 1
                print(f"{path}:{key[1]}: {key[0]} {side}: {key[5][:100]}")
            with keeping_parts(document):  # in the server's two steps: the shape rules second
                previous = add_shape_findings(check_source(text, path, shapes=False)).analysis.parsed
            for version in edited_versions(text, rng, args.edits):
                with keeping_parts(document):
                    incremental = add_shape_findings(check_source(version, path, shapes=False, previous=previous))
                previous = incremental.analysis.parsed
                fresh = check_source(version, path)
                versions += 1
                ours, theirs = {_key(f) for f in incremental.findings}, {_key(f) for f in fresh.findings}
                for key in sorted(ours ^ theirs):
                    differences[key[0]] += 1
                    side = "part by part only" if key in ours else "from scratch only"
                    print(f"{path}:{key[1]}: {key[0]} {side}: {key[5][:100]}")
        forget_parts(document)
        forget_rule_parts(document)
    print(f"files that split: {len(paths)}; checked {min(len(paths), args.files)}")
    print(f"whole file against its parts: differences: {sum(part_differences_seen.values())} "
          f"{dict(part_differences_seen)}")
    print(f"{versions} edited versions against checks from scratch: differences: {sum(differences.values())} "
          f"{dict(differences)}")


if __name__ == "__main__":
    main()

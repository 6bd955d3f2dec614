"""Read `# expect: TLxxx` / `# clean` markers (the convention of ../shared/corpus)."""
from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

_EXPECT = re.compile(r"#\s*expect\s*:\s*([A-Z]+\d+(?:\s*,\s*[A-Z]+\d+)*)")
_CLEAN = re.compile(r"#\s*clean\b")


def read_markers(path: Path) -> tuple[dict[int, set[str]], set[int]]:
    """({line: expected codes}, {clean lines})."""
    expects: dict[int, set[str]] = {}
    cleans: set[int] = set()
    source = path.read_bytes()
    for token in tokenize.tokenize(io.BytesIO(source).readline):
        if token.type != tokenize.COMMENT:
            continue
        match = _EXPECT.search(token.string)
        if match:
            expects.setdefault(token.start[0], set()).update(c.strip() for c in match.group(1).split(","))
        elif _CLEAN.search(token.string):
            cleans.add(token.start[0])
    return expects, cleans

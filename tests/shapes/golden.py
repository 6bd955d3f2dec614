"""Read `# infer:` markers of the golden shape fixtures.

`x = ...  # infer: {B, T, 3*n_embd}`    the one name bound on the line has this shape
`q, k = ...  # infer: q {B, T}, k {T}`  each named binding has its shape
`y = ...  # infer: y unknown`           no shape may be shown for `y` on this line
Dims are written as the report renders them: ints, symbols and expressions without
spaces (`(H-3)//2+1`), `?` for an unknown size and a leading `*` for unknown leading dims.
Braces (not brackets) keep the markers from being read as shape comments.
"""
from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

_MARKER = re.compile(r"#\s*infer:\s*(.*)$")
_NAMED = re.compile(r"(\w+)\s*(\{[^}]*\}|unknown)")
UNNAMED = ""


def _dims(braced: str) -> list | None:
    if braced == "unknown":
        return None
    inner = braced.strip("{}").strip()
    dims: list = []
    for part in (p.strip() for p in inner.split(",") if p.strip()):
        dims.append(int(part) if re.fullmatch(r"-?\d+", part) else part.replace(" ", ""))
    return dims


def read_expectations(path: Path) -> dict[int, dict[str, list | None]]:
    """{line: {name or UNNAMED: dims or None}}"""
    expected: dict[int, dict[str, list | None]] = {}
    source = path.read_bytes()
    for token in tokenize.tokenize(io.BytesIO(source).readline):
        if token.type != tokenize.COMMENT:
            continue
        match = _MARKER.search(token.string)
        if not match:
            continue
        body = match.group(1).strip()
        if body.startswith("{"):
            expected[token.start[0]] = {UNNAMED: _dims(body)}
        else:
            expected[token.start[0]] = {name: _dims(dims) for name, dims in _NAMED.findall(body)}
    return expected

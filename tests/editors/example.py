"""The example file every real-editor test opens, and what each editor must end up with.

`data/intent_classifier.py` is a small training script with three marked mistakes
(`# expect: CODE`, the corpus convention) and a smoke-test block whose tensors have
statically known shapes.  Each editor test checks, through the editor's own client:
the diagnostic codes per line; the hover text over `tokens`; and that applying the
softmax quick fix ("Add `dim=-1`") turns exactly `F.softmax(logits)` into
`F.softmax(logits, dim=-1)`.  That line has "é" and an emoji before the call, so the
column conversions (UTF-16 or UTF-8 on the wire, bytes or characters in the editor)
are exercised both ways.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

SAMPLE = Path(__file__).resolve().parent / "data" / "intent_classifier.py"
EXPECT = re.compile(r"#\s*expect:\s*(?P<codes>[A-Za-z0-9_, -]+)$")

HOVER_NAME = "tokens"
HOVER_LINE = "    tokens = torch.randint(0, 30000, (8, 16))"
HOVER_TEXT = "tokens: Tensor[8, 16]"
INLAY_HINT_LABEL = ": [8, 16]"

FIX_CODE = "TL201"
FIX_TITLE = "Add `dim=-1`"
FIX_BEFORE = "F.softmax(logits)"
FIX_AFTER = "F.softmax(logits, dim=-1)"
# Sent as editor settings where a test checks that they reach the server (default: warning).
SEVERITY_OVERRIDE = {"TL301": "error"}


@dataclass(frozen=True)
class Spot:
    """A place in the example: 0-based line, UTF-8 byte column (what Neovim's cursor takes)
    and character column (what Emacs' columns count)."""

    line: int
    byte_col: int
    char_col: int

    def as_json(self) -> dict:
        return {"line": self.line, "col": self.byte_col, "char": self.char_col}


def sample_text() -> str:
    return SAMPLE.read_text(encoding="utf-8")


def expected_findings(text: str) -> set[tuple[int, str]]:
    """(1-based line, code) for every `# expect:` marker in the file."""
    found = set()
    for number, line in enumerate(text.splitlines(), start=1):
        match = EXPECT.search(line)
        if match:
            found.update((number, code.strip()) for code in match["codes"].split(",") if code.strip())
    return found


def spot_of(text: str, line_text_part: str, needle: str) -> Spot:
    """Where `needle` starts on the only line that contains `line_text_part`."""
    lines = text.splitlines()
    numbers = [number for number, line in enumerate(lines) if line_text_part in line]
    assert len(numbers) == 1, f"{SAMPLE.name} must have exactly one line with {line_text_part!r}, has {len(numbers)}"
    line = lines[numbers[0]]
    start = line.index(needle)
    return Spot(numbers[0], len(line[:start].encode("utf-8")), start)


def hover_spot(text: str) -> Spot:
    return spot_of(text, HOVER_LINE, HOVER_NAME)


def fix_spot(text: str) -> Spot:
    return spot_of(text, FIX_BEFORE, FIX_BEFORE)


def inlay_hint_spot(text: str) -> Spot:
    """Where the hint after `tokens` sits (its line is ASCII, so every column unit agrees)."""
    spot = hover_spot(text)
    end = spot.char_col + len(HOVER_NAME)
    return Spot(spot.line, end, end)


def text_after_fix(text: str) -> str:
    assert text.count(FIX_BEFORE) == 1, f"{SAMPLE.name} must contain {FIX_BEFORE!r} exactly once"
    return text.replace(FIX_BEFORE, FIX_AFTER)


def write_project(folder: Path) -> Path:
    """A copy of the example in a project folder of its own (its pyproject.toml marks the
    root the documented set-ups look for); returns the copy's path."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pyproject.toml").write_text('[project]\nname = "intent-classifier"\nversion = "0.1.0"\n',
                                           encoding="utf-8")
    copy = folder / SAMPLE.name
    copy.write_text(sample_text(), encoding="utf-8")
    return copy

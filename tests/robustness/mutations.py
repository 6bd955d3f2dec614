"""Edits of real-looking files the way people type and paste: characters deleted,
brackets left open, statements half typed, tabs, CRLF or lone-CR line endings,
emoji and CJK, 10,000-character lines.

A mutation is a plain tuple `(kind, where, what)`: `where` in [0, 1) is a place in the
text, `what` picks a snippet or a count.  Hypothesis draws and shrinks these tuples; the
LSP fuzzing draws them from a seeded `random.Random`.  `apply` is deterministic.
"""
from __future__ import annotations

import random
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# Real-looking PyTorch files: the fix goldens (training loops, models, evaluation) and examples.
SOURCES = sorted((REPO / "tests" / "fixes" / "golden").glob("*.in.py"))[::3] + sorted((REPO / "examples").glob("*.py"))

SNIPPETS = (
    "(", ")", "[", "]", "{", "}", ":", ",", ".", "'", '"', '"""', "\\", "@", "=", "+", "*", "\t", "    ",
    "\n", "\r\n", "\r", "\x0c", "def f(", "for x in ", "if x", "return", "lambda:", "class", "with ",
    "model(", "torch.softmax(x", "nn.DataParallel(", "x.view(-1", "loss.backward(", "optimizer.", "# noqa",
    "🔥", "张量 = 1", "é", "\u2028", "\U0001f600\U0001f600", "\ufeff", "x = [1, 2", "y = {'a':", "async ", "yield",
)
KINDS = ("delete", "insert", "insert", "insert", "long_line", "line_ending", "tabs", "duplicate_line", "cut_line")
LONG_LINE = "x = " + " + ".join(["a"] * 3_333) + "\n"  # about 10,000 characters


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def apply(text: str, mutation: tuple[str, float, int]) -> str:
    kind, where, what = mutation
    at = int(where * (len(text) + 1)) if text else 0
    if kind == "delete":
        return text[:at] + text[at + 1 + what % 20:]
    if kind == "insert":
        return text[:at] + SNIPPETS[what % len(SNIPPETS)] + text[at:]
    if kind == "long_line":
        start = text.rfind("\n", 0, at) + 1
        return text[:start] + LONG_LINE + text[start:]
    if kind == "line_ending":
        return re.sub(r"\r\n|\r|\n", ("\r\n", "\r", "\n")[what % 3], text)
    if kind == "tabs":  # some of the indentation after `at` typed with tabs
        return text[:at] + re.sub(r"(?m)^    ", "\t", text[at:], count=1 + what % 50)
    lines = text.split("\n")
    index = min(int(where * len(lines)), len(lines) - 1)
    if kind == "duplicate_line":
        lines.insert(index, lines[index])
    else:  # cut_line: the end of a line lost, as when typing it anew
        lines[index] = lines[index][: what % (len(lines[index]) + 1)]
    return "\n".join(lines)


def apply_all(text: str, mutations) -> str:
    for mutation in mutations:
        text = apply(text, mutation)
    return text


def random_mutation(rng: random.Random) -> tuple[str, float, int]:
    return rng.choice(KINDS), rng.random(), rng.randrange(1000)

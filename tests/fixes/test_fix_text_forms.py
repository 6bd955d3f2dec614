"""Every code action of every golden input, through the path a language-server client
takes (one fix built on its own, `build_fix`; the `# noqa` action), on the text forms
that libcst renders differently from the original: CRLF and lone-CR line endings, form
feeds that start lines, a leading byte-order mark.

For each action: the edited file parses (the check `--fix` makes, made for single
actions too), its line breaks are all of the file's own kind (a lone-CR file once
had two lines joined), the form feeds of the lines no action edits stay (a form feed
on a statement that is moved or removed may go with it), and a byte-order mark stays
first."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from torch_lsp.checker import check_source
from torch_lsp.codeactions import actions_for, apply_edits, build_fix, fix_offers_at
from torch_lsp.parsing import parses

GOLDEN = Path(__file__).resolve().parent / "golden"
INPUTS = sorted(GOLDEN.glob("*.in.py"))
LINE_BREAKS = re.compile(r"\r\n|\r|\n")
# CRLF has golden pairs of its own (`*_crlf.in.py`).
FORMS = [("cr", "\r", False, False), ("form_feeds_cr", "\r", True, False), ("byte_order_mark", "\n", False, True)]


def with_form_feeds(text: str, spared: set[int]) -> str:
    """A form feed at the start of every third line (1-based numbers in `spared` excepted)."""
    lines = text.split("\n")
    return "\n".join("\f" + line if n % 3 == 0 and line.strip() and n + 1 not in spared else line
                     for n, line in enumerate(lines))


def edited_lines(source: str) -> set[int]:
    """The 1-based lines that some action's edits touch."""
    lines = set()
    for _, action in actions(source):
        for edit in action.edits:
            first, last = source.count("\n", 0, edit.start) + 1, source.count("\n", 0, edit.end) + 1
            lines.update(range(first, last + 1))
    return lines


def actions(source: str):
    """(finding, action) for every fix and `# noqa` action the server would offer."""
    result = check_source(source, "golden.py")
    for finding in result.findings:
        span = (finding.line, finding.col, finding.end_line, finding.end_col)
        for offer in fix_offers_at(result.analysis, result.findings, finding.code, span):
            built = build_fix(result.analysis, result.findings, finding.code, span, offer.title)
            assert built is not None, f"{offer.title!r} is offered but cannot be built"
            yield finding, built
        for action in actions_for(result.analysis, finding.code, finding.line):
            yield finding, action


@pytest.mark.parametrize("form, newline, form_feeds, byte_order_mark", FORMS, ids=[f[0] for f in FORMS])
@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.name.removesuffix(".in.py"))
def test_every_action_keeps_the_file_in_its_form(path, form, newline, form_feeds, byte_order_mark):
    text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
    if form_feeds:
        text = with_form_feeds(text, spared=edited_lines(text))
    source = ("\ufeff" if byte_order_mark else "") + text.replace("\n", newline)
    assert parses(source)
    seen = 0
    for finding, action in actions(source):
        seen += 1
        fixed = apply_edits(source, action.edits)
        where = f"{action.title!r} for {finding.code} on line {finding.line}"
        assert parses(fixed), f"{where} leaves code that does not parse:\n{fixed!r}"
        assert set(LINE_BREAKS.findall(fixed)) <= {newline}, f"{where} mixes line breaks"
        assert fixed.count("\f") == source.count("\f"), f"{where} drops or adds a form feed"
        assert fixed.startswith("\ufeff") == byte_order_mark, f"{where} moves the byte-order mark"
    assert seen, "every golden input has a finding with actions"


def test_a_fix_in_a_lone_cr_file_keeps_the_next_line_apart():
    source = "import torch.nn.functional as F\r\rdef f(x):\r    y = F.softmax(x)\r    z = 1\r    return y, z\r"
    (fixed,) = [apply_edits(source, action.edits) for finding, action in actions(source)
                if action.title.startswith("Add `dim")]
    assert "    y = F.softmax(x, dim=-1)\r    z = 1\r" in fixed

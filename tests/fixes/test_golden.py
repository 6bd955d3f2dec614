"""Golden fixes: `golden/TLxxx_<case>.in.py` fixed with the fixes of rule TLxxx is exactly
`golden/TLxxx_<case>.out.py`, byte for byte (line endings, tabs and comments included).

Only rule TLxxx is checked, and its main fix is applied, unsafe ones included, round
after round until nothing changes (`fix_all`).  A first line `# fix: <title start>`
picks another offer instead: every finding of TLxxx gets the offer whose title starts
so.  An `.out.py` equal to its `.in.py` says that no fix may be offered there.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from torch_lsp.checker import check_source
from torch_lsp.codeactions import apply_edits, build, conflicts, fix_all, fix_offers
from torch_lsp.settings import Selection, Settings

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(GOLDEN.glob("*.in.py"))
DIRECTIVE = "# fix: "


def case_id(path: Path) -> str:
    return path.name.removesuffix(".in.py")


def settings_for(code: str) -> Settings:
    return Settings().with_selection(Selection(select=(code,)))


def fixed_text(path: Path) -> str:
    """What the fixes of the case's rule make of its `.in.py`."""
    source = path.read_bytes().decode("utf-8")
    code = case_id(path).split("_", 1)[0]
    first_line = source.splitlines()[0] if source else ""
    if not first_line.startswith(DIRECTIVE):
        return fix_all(source, str(path), settings_for(code), unsafe=True).source
    wanted = first_line[len(DIRECTIVE):].strip()
    result = check_source(source, str(path), settings_for(code))
    chosen = []
    for finding in result.findings:
        offers = [o for o in fix_offers(result.analysis, finding) if o.title.startswith(wanted)]
        fix = build(offers[0]) if offers else None
        if fix is not None and not any(conflicts(fix.edits, other) for other in chosen):
            chosen.append(fix.edits)
    return apply_edits(source, [edit for edits in chosen for edit in edits])


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_fix_gives_the_golden_output(case: Path):
    expected = case.with_name(case.name.replace(".in.py", ".out.py")).read_bytes().decode("utf-8")
    assert fixed_text(case) == expected


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_golden_output_is_fixed_for_good(case: Path):
    """The output parses, and fixing it again changes nothing."""
    out = case.with_name(case.name.replace(".in.py", ".out.py"))
    text = out.read_bytes().decode("utf-8")
    ast.parse(text)
    code = case_id(case).split("_", 1)[0]
    assert fix_all(text, str(out), settings_for(code), unsafe=True).source == text


def test_every_fixable_rule_has_golden_cases():
    from torch_lsp.codeactions import fixable_codes

    covered = {case_id(case).split("_", 1)[0] for case in CASES}
    assert fixable_codes() <= covered, sorted(fixable_codes() - covered)

"""Half-typed code: a syntax error is reported and the rest of the file keeps its findings."""
from __future__ import annotations

import sys
import textwrap

import pytest

from torch_lsp.checker import check_source
from torch_lsp.parsing import parse_source

TRAINING = textwrap.dedent(
    """
    import torch
    import torch.nn as nn


    def wrap(model):
        return nn.DataParallel(model)


    def typing_now(model, x):
        out = model(
    {broken}


    def later(model):
        return nn.DataParallel(model)
    """
)


@pytest.mark.parametrize(
    "broken",
    [
        "",  # unclosed call
        "    for x in loader",  # missing colon, body follows
        "    loss.",  # trailing dot
        "    s = 'unterminated",
        "    if x:",  # block header with no body
        "        return x +",
    ],
)
def test_findings_survive_a_syntax_error(broken):
    source = TRAINING.replace("{broken}", broken)
    findings = check_source(source, "half_typed.py").findings
    codes = [f.code for f in findings]
    assert "syntax-error" in codes
    lines = {f.line for f in findings if f.code == "TL406"}
    # both DataParallel calls, before and after the broken function
    assert lines == {7, 16}, findings


def test_syntax_error_is_a_sentence_with_a_precise_range():
    source = "import torch\nx = torch.zeros(3\ny = 1\n"
    issue = check_source(source, "f.py").findings[0]
    assert issue.code == "syntax-error" and issue.severity == "error"
    assert issue.message.startswith("Syntax error: ") and issue.message.endswith(".")
    assert issue.line == 2
    assert issue.end_col > issue.col


def test_columns_elsewhere_stay_valid_after_recovery():
    source = "import torch\nbad = (\nx = torch.nn.DataParallel(m)\n"
    tree, issues = parse_source(source)
    assert issues
    calls = [n for n in __import__("ast").walk(tree) if type(n).__name__ == "Call"]
    assert any(c.lineno == 3 and c.col_offset == 4 for c in calls)


def test_garbage_never_raises():
    for source in ["\x00\x00", "def (:\n" * 50, ")" * 5000, "é" * 10000, "\t\tif", "class A(:\n  pass"]:
        check_source(source, "junk.py")


def test_a_byte_order_mark_keeps_line_1_and_its_columns():
    source = "\ufeffimport torch.nn as nn; m = nn.DataParallel(nn.Linear(2, 2))\n"
    (finding,) = check_source(source, "bom.py").findings
    assert finding.code == "TL406" and finding.line == 1
    # UTF-8 byte columns of the line as it is, the mark included
    assert finding.col == len(source[: source.index("nn.DataParallel")].encode("utf-8"))


def test_a_lone_surrogate_in_a_string_is_not_a_syntax_error():
    source = 'import torch.nn as nn\ns = "\ud800"\nm = nn.DataParallel(nn.Linear(2, 2))\n'
    assert [f.code for f in check_source(source, "surrogate.py").findings] == ["TL406"]


def test_an_expression_too_deep_for_the_parser_costs_its_line_only():
    source = "import torch.nn as nn\nx = " + " + ".join(["a"] * 30_000) + "\nm = nn.DataParallel(nn.Linear(2, 2))\n"
    findings = check_source(source, "deep.py").findings
    assert [(f.code, f.line) for f in findings] == [("syntax-error", 2), ("TL406", 3)]
    assert "nested too deeply" in findings[0].message and "still checked" in findings[0].message


def test_a_file_nothing_of_which_parses_says_so():
    (finding,) = check_source("x = (\n" * 300, "nested.py").findings
    assert finding.code == "syntax-error" and finding.message.endswith("Nothing in this file was checked.")


@pytest.mark.parametrize("mistake, body", [
    ("over-indented first line", "            total = 0\n        return total\n"),
    ("header half typed", "    retu\n        total = 0\n        return total\n"),
    ("block indented too deep", "        total = 0\n            for x in y:\n                total += x\n        return total\n"),
    # The deeper line before the unmatched unindent closes a call written over several lines:
    # blanking it would leave the call open (two "'(' was never closed" errors on lines that are fine).
    ("call closed before an unmatched unindent",
     "     layers = nn.Sequential(\n            nn.ReLU(),\n        )\n    return layers\n"),
    # A pasted if/else that lost its bodies' indentation: the header and its `else:` are one mistake.
    ("if/else bodies flattened", "    if y:\n    total = 0\n    else:\n    total = 1\n    return total\n"),
    ("if body flattened, else body kept", "    if y:\n    total = 0\n    else:\n        total = 1\n    return total\n"),
    ("try body flattened", "    try:\n    total = y[0]\n    except IndexError:\n    total = 0\n    finally:\n    pass\n"
                           "    return total\n"),
])
def test_one_indentation_mistake_is_one_syntax_error(mistake, body):
    source = f"import torch.nn as nn\n\n\ndef f(y):\n{body}\n\ndef g(m):\n    return nn.DataParallel(m)\n"
    codes = [f.code for f in check_source(source, "indent.py").findings]
    assert codes.count("syntax-error") == 1 and "TL406" in codes, codes


def test_async_keyword_argument_of_old_pytorch_code_says_what_it_is_now():
    # `.cuda(async=True)` was PyTorch's `non_blocking` before 0.4; since Python 3.7 it does not parse.
    source = "import torch\nx = torch.zeros(3)\ny = x.cuda(async=True)\nz = x.cuda(non_blocking=True)\n"
    (issue,) = [f for f in check_source(source, "old.py").findings if f.code == "syntax-error"]
    assert issue.line == 3 and (issue.col, issue.end_col) == (11, 16)  # the word `async`
    assert "`async` has been a reserved word since Python 3.7" in issue.message
    assert "`non_blocking`" in issue.message and issue.message.endswith("The rest of the file is still checked.")


def test_async_comparison_is_not_taken_for_the_old_argument():
    source = "import torch\nif async == 1:\n    pass\n"
    (issue,) = [f for f in check_source(source, "cmp.py").findings if f.code == "syntax-error"]
    assert "non_blocking" not in issue.message


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="Python 3.12 parses these f-strings (PEP 701)")
def test_an_f_string_reusing_its_quote_says_python_3_12_accepts_it():
    # `f"{path / "checkpoints"}"` is valid from Python 3.12; on an older interpreter the error says so.
    _, issues = parse_source('import os\nname = f"{os.path.join(root, "checkpoints")}"\n')
    assert len(issues) == 1 and issues[0].line == 2
    assert "Python 3.12 and later accept an f-string that reuses its own quote" in issues[0].message
    _, unclosed = parse_source('name = f"{root"\n')  # an error on every Python: no such note
    assert unclosed and "PEP 701" not in unclosed[0].message


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="Python 3.12 parses type aliases and type parameters")
def test_type_aliases_and_type_parameters_say_they_are_python_3_12_syntax():
    # PEP 695 (`type X = ...`, `class Stack[T]:`, `def first[T](...)`), valid from Python 3.12.
    source = ("type Pairs = list[tuple[int, int]]\n\nclass Stack[T]:\n    pass\n\n"
              "def first[T](items: list[T]) -> T:\n    return items[0]\n\ntype = 3\nvalues[0] = (1,\n")
    _, issues = parse_source(source)
    assert [issue.line for issue in issues] == [1, 3, 6, 10]
    assert all("Python 3.12 syntax (PEP 695)" in issue.message for issue in issues[:3])
    assert "PEP 695" not in issues[3].message  # `type` as a name, then an unclosed bracket: no such note


def test_a_block_left_empty_is_reported_at_its_header():
    # An exercise's `def forward(...):` whose body is only a comment: Python points at the next
    # statement, which is fine code; the mistake is the header with no block.
    source = "import torch\n\n\ndef forward(x):\n    # YOUR CODE\n\n\ndef loss(y):\n    return y.sum()\n"
    (issue,) = [f for f in check_source(source, "exercise.py").findings if f.code == "syntax-error"]
    assert issue.line == 4 and issue.message.startswith("Syntax error: Expected an indented block after function")

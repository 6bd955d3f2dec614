"""IPython's lines masked: every line keeps its length, Python stays Python."""
from __future__ import annotations

import ast

import pytest

from torch_lsp.notebook_magics import mask_magics
from torch_lsp.notebooks import notebook_program


@pytest.mark.parametrize("line, masked", [
    ("%matplotlib inline", "#matplotlib inline"),
    ("!pip install torch", "#pip install torch"),
    ("files = !ls -la", "#iles = !ls -la"),
    ("model?", "#odel?"),
    ("?model", "#model"),
    ("model??", "#odel??"),
    ("%time out = model(x)", "0;    out = model(x)"),
    ("%timeit -n 3 f()", "#timeit -n 3 f()"),
    ("%time for i in x: pass", "#time for i in x: pass"),
    ("    !echo inside a loop", "    #echo inside a loop"),
    ("y = 3  # why?", "y = 3  # why?"),
    ("x = a % b", "x = a % b"),
    ("s = 'what?'", "s = 'what?'"),
    # Automagic: line magics without their `%`, where the line is not Python.
    ("pip install langchain", "#ip install langchain"),
    ("run train.py --epochs 3", "#un train.py --epochs 3"),
    ("cd ..", "#d .."),
    ("cd / path", "cd / path"),  # a division: Python
    ("pip in packages", "pip in packages"),
    ("pipeline install x", "pipeline install x"),
])
def test_one_line(line, masked):
    assert mask_magics(line) == masked


def test_lines_inside_brackets_strings_and_continuations_are_python():
    source = "x = (7\n     % 2)\ns = '''\n%not a magic\n'''\ny = 1 + \\\n    2\n!ls"
    masked = mask_magics(source)
    assert masked.split("\n") == source.split("\n")[:-1] + ["#ls"]
    ast.parse(masked)


def test_a_shell_command_continued_with_backslashes_is_masked_whole():
    # IPython joins the continued lines into the one command (`output = !python demo.py \\`).
    source = ("output = !python3 demo.py \\\n--Transformation TPS \\\n    --saved_model a.pth\n"
              "%time y = (1 + \\\n     2)\nz = 1 + \\\n    2\n")
    masked = mask_magics(source)
    assert masked.split("\n") == ["#utput = !python3 demo.py \\", "#-Transformation TPS \\",
                                  "    #-saved_model a.pth", "#time y = (1 + \\", "     #)", "z = 1 + \\",
                                  "    2", ""]
    ast.parse(masked)


def test_cell_magics():
    assert mask_magics("%%capture\nimport torch\n") == "#%capture\nimport torch\n"
    assert mask_magics("%%bash\necho hi (\n\n  ls\n") == "#%bash\n#cho hi (\n\n  #s\n"


def test_every_line_keeps_its_length():
    source = "%%time\n!pip install é\nmodel?\n%time a = f(1)\nb = 2\n"
    masked = mask_magics(source)
    assert [len(line) for line in masked.split("\n")] == [len(line) for line in source.split("\n")]


def test_a_program_splits_back_into_its_cells_with_ipython_restored():
    cells = [(1, "!pip install torch\nimport torch"), (3, "%time x = torch.ones(2)\n"), (4, ""), (5, "y = x\n\n")]
    program = notebook_program(cells)
    ast.parse(program.source)
    assert program.cells_of(program.source) == [text for _, text in cells]
    assert [(c.number, c.first_line, c.line_count) for c in program.cells] == [(1, 1, 2), (3, 4, 1), (4, 6, 1),
                                                                                (5, 8, 2)]
    assert program.cell_line(5) == (program.cells[1], 1)
    fixed = program.source.replace("x = torch.ones(2)", "x = torch.ones(2, device=device)")
    fixed = "import os\n" + fixed
    assert program.cells_of(fixed) == ["import os\n!pip install torch\nimport torch",
                                       "%time x = torch.ones(2, device=device)\n", "", "y = x\n\n"]


def test_a_block_of_only_magics_keeps_a_statement_and_the_cell_parses():
    source = ("logger = 'Comet'\nif logger == 'Comet':\n  %pip install -q comet_ml\n  import comet_ml\n"
              "elif logger == 'TensorBoard':\n  %load_ext tensorboard\n  %tensorboard --logdir runs/train")
    masked = mask_magics(source)
    ast.parse(masked)
    assert masked.split("\n")[2] == "  0#ip install -q comet_ml"
    assert masked.split("\n")[5:] == ["  0#oad_ext tensorboard", "  0#ensorboard --logdir runs/train"]
    assert mask_magics("if ok:\n    !echo inside\n    x = 1") == "if ok:\n    #echo inside\n    x = 1"
    assert [len(line) for line in masked.split("\n")] == [len(line) for line in source.split("\n")]
    program = notebook_program([(11, source)])
    assert program.cells_of(program.source) == [source]


def test_a_cell_indented_whole_opens_a_block_on_its_first_comment():
    # IPython strips a cell's leading indentation; the first line, a comment, becomes the
    # header of a block of the same length, so every other position stays.
    source = "  # pasted from a loop body\n  x = torch.zeros(3)\n  y = x + 1\n"
    masked = mask_magics(source)
    assert masked == "if 1:#sted from a loop body\n  x = torch.zeros(3)\n  y = x + 1\n"
    assert [len(line) for line in masked.split("\n")] == [len(line) for line in source.split("\n")]
    assert mask_magics(" # only the comment is indented\nx = 1\n") == " # only the comment is indented\nx = 1\n"
    program = notebook_program([(3, source)])
    assert program.cells_of(program.source) == [source]


def check_notebook(tmp_path, cells: list[list[str]]) -> list[dict]:
    """`torch-lsp check --format json` of a notebook of these code cells (each a list of lines)."""
    import json
    import subprocess
    import sys

    notebook = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                           "source": source} for source in cells],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "setup.ipynb"
    path.write_text(json.dumps(notebook))
    run = subprocess.run([sys.executable, "-m", "torch_lsp", "check", str(path), "--format", "json"],
                         capture_output=True, text=True)
    return json.loads(run.stdout)


def test_an_automagic_pip_line_gives_no_syntax_error_in_a_notebook(tmp_path):
    # `pip install x` runs in IPython (automagic); a real syntax error in the next cell is still one.
    findings = check_notebook(tmp_path, [["pip install langchain\n", "import torch\n", "x = torch.zeros(3)"],
                                         ["y = (1,"]])
    assert [f["code"] for f in findings] == ["syntax-error"], findings


def test_a_statement_opened_by_a_magic_name_stays_python():
    # `env` is a line magic too; `env = make(...` over two lines is Python, not automagic.
    cell = 'env = wrappers.Monitor(make("CartPole-v0"),\n                      directory="videos")\n'
    assert mask_magics(cell) == cell


def test_shell_commands_without_their_bang_are_one_syntax_error_per_cell_that_says_what_to_write(tmp_path):
    # IPython refuses a cell at its first shell command typed without `!`; "invalid syntax" on each
    # line of it said neither that nor what to write.  A real syntax error stays as it was.
    findings = check_notebook(tmp_path, [
        ["wget https://example.com/data.zip\n", "unzip -q data.zip\n", "tar xf more.tar\n"],
        ["import torch\n", "git clone https://github.com/owner/repository\n"],
        ["!wget https://example.com/fine.zip\n", "nvidia-smi\n"],
        ["y = (1,"]])
    assert [(f["code"], f["cell"], f["line"], f["column"]) for f in findings] == [
        ("syntax-error", 1, 1, 1), ("syntax-error", 2, 2, 1), ("syntax-error", 4, 1, 5)], findings
    assert findings[0]["message"].startswith(
        "Syntax error: this line is a shell command (`wget`), which a notebook cell runs only "
        "with `!` in front (`!wget https://example.com/data.zip`) or in a cell that starts with `%%bash`. "
        "So do the cell's other shell commands (line 2 of cell 1, line 3 of cell 1).")
    assert "a shell command (`git`)" in findings[1]["message"]
    assert "(`!git clone https://github.com/owner/repository`)" in findings[1]["message"]
    assert "shell command" not in findings[2]["message"]


def test_a_cell_that_leaves_a_block_empty_gets_the_error_not_the_next_cell(tmp_path):
    findings = check_notebook(tmp_path, [["import torch\n", "\n", "def reward(state):\n", "    # <YOUR CODE>\n"],
                                         ["agent = make_agent(\n", "    epsilon=0.1,\n", ")\n"]])
    assert [(f["code"], f["cell"], f["line"]) for f in findings] == [("syntax-error", 1, 3)], findings

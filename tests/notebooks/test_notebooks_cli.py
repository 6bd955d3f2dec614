"""`torch-lsp check` and `torch-lsp shapes` on Jupyter notebooks, run as a user runs them."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.rules.test_fixtures import FIXTURES


def code_cell(source, **extra) -> dict:
    return {"cell_type": "code", "execution_count": None, "id": extra.pop("id", "c"), "metadata": {},
            "outputs": [], "source": source, **extra}


def markdown_cell(text: str) -> dict:
    return {"cell_type": "markdown", "id": "m", "metadata": {}, "source": [text]}


def notebook_text(cells: list[dict], metadata: dict | None = None) -> str:
    return json.dumps({"cells": cells, "metadata": metadata or {}, "nbformat": 4, "nbformat_minor": 5},
                      indent=1, ensure_ascii=False) + "\n"


# A model defined in cell 3 is called in cell 6 with a batch of the wrong width, made in
# cell 5 behind IPython's `%time`; IPython lines everywhere around.
MNIST = [
    markdown_cell("# MNIST, the quick way"),
    code_cell("%pip install torch\n!nvidia-smi\nimport torch\nimport torch.nn as nn"),
    code_cell(["class Net(nn.Module):\n", "    def __init__(self):\n", "        super().__init__()\n",
               "        self.fc = nn.Linear(784, 10)\n", "\n", "    def forward(self, x):\n",
               "        return self.fc(x)"]),
    code_cell("model = Net()\nNet?\n?model\nmodel??"),
    code_cell("%%capture\n%time batch = torch.randn(64, 100)"),
    code_cell("out = model(batch)  # the call"),
    code_cell("%%bash\necho 'not python (at all'"),
]


def test_a_folder_with_only_a_notebook_is_checked(tmp_path, cli):
    (tmp_path / "train.ipynb").write_text(notebook_text(MNIST), encoding="utf-8")
    completed = cli("check", ".", cwd=tmp_path)
    assert "no Python files found" not in completed.stderr
    assert completed.returncode == 1
    (line,) = completed.stdout.splitlines()
    # The mismatch is where Linear runs (cell 3, line 7); the message places the batch and
    # the call in their own cells.
    assert line.startswith("train.ipynb:cell 3:7:16: TL501 ")
    assert "(from torch.randn(64, 100) (line 2 of cell 5))" in line
    assert "the call on line 1 of cell 6" in line
    assert "Found 1 problem in 1 of 1 file checked." in completed.stderr


def test_json_sarif_and_github_name_the_cell(tmp_path, cli):
    (tmp_path / "train.ipynb").write_text(notebook_text(MNIST), encoding="utf-8")
    (item,) = json.loads(cli("check", "--format", "json", "train.ipynb", cwd=tmp_path).stdout)
    assert (item["path"], item["cell"], item["line"], item["column"], item["code"]) == \
           ("train.ipynb", 3, 7, 16, "TL501")
    sarif = json.loads(cli("check", "--format", "sarif", "train.ipynb", cwd=tmp_path).stdout)
    (result,) = sarif["runs"][0]["results"]
    assert result["properties"]["cell"] == 3
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 7
    github = cli("check", "--format", "github", "train.ipynb", cwd=tmp_path).stdout
    assert github.startswith("::error file=train.ipynb,line=7,col=16,endLine=7,endColumn=26,title=TL501 (cell 3)::")


def test_a_python_file_reports_no_cell(tmp_path, cli):
    (tmp_path / "train.py").write_text("import torch.nn as nn\nmodel = nn.DataParallel(nn.Linear(2, 2))\n")
    (item,) = json.loads(cli("check", "--format", "json", "train.py", cwd=tmp_path).stdout)
    assert "cell" not in item


def test_magics_do_not_shift_columns_and_continuations_are_python(tmp_path, cli):
    cells = [code_cell("import torch.nn as nn\nx = (7\n     % 2)\n!ls\nmodel = nn.DataParallel(nn.Linear(2, 2))")]
    (tmp_path / "a.ipynb").write_text(notebook_text(cells), encoding="utf-8")
    completed = cli("check", "a.ipynb", cwd=tmp_path)
    assert completed.stdout.startswith("a.ipynb:cell 1:5:9: TL406 "), completed.stdout + completed.stderr


def test_a_continued_shell_command_is_not_a_syntax_error(tmp_path, cli):
    cells = [code_cell("output = !python3 demo.py \\\n--image_folder demo_image/ \\\n--saved_model a.pth"),
             code_cell("import torch.nn as nn\nmodel = nn.DataParallel(nn.Linear(2, 2))")]
    (tmp_path / "a.ipynb").write_text(notebook_text(cells), encoding="utf-8")
    completed = cli("check", "a.ipynb", cwd=tmp_path)
    assert completed.stdout.startswith("a.ipynb:cell 2:2:9: TL406 "), completed.stdout + completed.stderr
    assert "syntax" not in completed.stdout.lower()


def test_a_cell_pasted_with_its_indentation_runs_as_ipython_runs_it(tmp_path, cli):
    # IPython strips the first line's indentation from every line of a cell: no syntax error,
    # and the cell's code is checked at its own columns.
    cells = [code_cell("import torch.nn as nn"),
             code_cell(" # Wrap the model for two GPUs\n model = nn.DataParallel(nn.Linear(2, 2))\n model")]
    (tmp_path / "a.ipynb").write_text(notebook_text(cells), encoding="utf-8")
    completed = cli("check", "a.ipynb", cwd=tmp_path)
    assert completed.stdout.startswith("a.ipynb:cell 2:2:10: TL406 "), completed.stdout + completed.stderr
    assert "syntax" not in completed.stdout.lower()


def test_an_invalid_notebook_is_an_error_never_no_problems(tmp_path, cli):
    (tmp_path / "clean.py").write_text("x = 1\n")
    (tmp_path / "broken.ipynb").write_text('{"cells": [\n<<<<<<< HEAD\n', encoding="utf-8")
    completed = cli("check", ".", cwd=tmp_path)
    assert completed.returncode == 2
    assert "broken.ipynb is not a valid notebook: it is not JSON" in completed.stderr
    assert "line 2, column 1" in completed.stderr
    assert "1 file was skipped" in completed.stderr
    (tmp_path / "broken.ipynb").write_text('{"worksheets": []}', encoding="utf-8")
    completed = cli("check", "broken.ipynb", cwd=tmp_path)
    assert completed.returncode == 2 and "nbformat 3" in completed.stderr


def test_a_notebook_of_another_language_is_skipped(tmp_path, cli):
    r_notebook = notebook_text([code_cell("x <- c(1, 2)")], {"language_info": {"name": "R"}})
    (tmp_path / "stats.ipynb").write_text(r_notebook, encoding="utf-8")
    (tmp_path / "train.py").write_text("x = 1\n")
    completed = cli("check", ".", cwd=tmp_path)
    assert completed.returncode == 0
    assert "stats.ipynb was skipped because it is a R notebook" in completed.stderr


def test_fix_rewrites_only_the_changed_cell(tmp_path, cli):
    cells = [
        code_cell(["import torch\n", "import torch.nn.functional as F\n", "%matplotlib inline"], id="imports",
                  outputs=[{"output_type": "stream", "name": "stdout", "text": ["ça marche 1e-05\n"]}]),
        code_cell("probs = F.softmax(torch.randn(4, 3))\n%time logits = F.softmax(torch.randn(2, 3))", id="fix"),
    ]
    path = tmp_path / "a.ipynb"
    original = json.dumps({"cells": cells, "metadata": {"b": 1, "a": [1.0, 2.5e-07]}, "nbformat": 4,
                           "nbformat_minor": 5}, indent=1, ensure_ascii=True)  # no final line break
    path.write_text(original, encoding="utf-8")
    completed = cli("check", "--fix", "a.ipynb", cwd=tmp_path)
    assert "Fixed 2 problems (TL201 ×2) in 1 file." in completed.stderr, completed.stderr
    fixed = path.read_text(encoding="utf-8")
    expected = original.replace(
        '"probs = F.softmax(torch.randn(4, 3))\\n%time logits = F.softmax(torch.randn(2, 3))"',
        '"probs = F.softmax(torch.randn(4, 3), dim=-1)\\n%time logits = F.softmax(torch.randn(2, 3), dim=-1)"')
    assert expected != original
    assert fixed == expected


def test_diff_shows_the_notebook_change(tmp_path, cli):
    cells = [code_cell(["import torch.nn.functional as F\n", "p = F.softmax(x)\n", "!echo done"])]
    path = tmp_path / "a.ipynb"
    path.write_text(notebook_text(cells), encoding="utf-8")
    completed = cli("check", "--diff", "a.ipynb", cwd=tmp_path)
    assert '-    "p = F.softmax(x)\\n",' in completed.stdout
    assert '+    "p = F.softmax(x, dim=-1)\\n",' in completed.stdout
    assert path.read_text(encoding="utf-8") == notebook_text(cells)


def test_shapes_of_a_notebook_flow_across_cells(tmp_path, cli):
    cells = [code_cell("import torch\nx = torch.randn(8, 3, 32, 32)"), markdown_cell("Flatten"),
             code_cell("!echo hi\ny = x.flatten(1)")]
    (tmp_path / "s.ipynb").write_text(notebook_text(cells), encoding="utf-8")
    completed = cli("shapes", "s.ipynb", cwd=tmp_path)
    assert completed.stdout.splitlines() == [
        "s.ipynb:cell 1:2:1: x: [8, 3, 32, 32]  (from torch.randn(8, 3, 32, 32) (line 2 of cell 1))",
        "s.ipynb:cell 3:2:1: y: [8, 3072]  (from x.flatten(1) (line 2 of cell 3))",
    ]
    records = json.loads(cli("shapes", "--format", "json", "s.ipynb", cwd=tmp_path).stdout)
    assert [(r["cell"], r["line"], r["name"]) for r in records] == [(1, 2, "x"), (3, 2, "y")]


def test_probe_failure_is_reported_in_its_cell(tmp_path, cli):
    """TL502, the rule the corpus leaves out (it needs the probe and torch)."""
    from tests.shapes.conftest import require_torch

    require_torch()
    source = (FIXTURES / "TL502.py").read_text(encoding="utf-8")
    cells = [code_cell("%matplotlib inline"), code_cell(source)]
    (tmp_path / "probe.ipynb").write_text(notebook_text(cells), encoding="utf-8")
    (tmp_path / "probe.py").write_text(source, encoding="utf-8")
    as_file = json.loads(cli("check", "--probe", "--probe-python", sys.executable, "--select", "TL502",
                             "--format", "json", "probe.py", cwd=tmp_path, timeout=300).stdout)
    in_notebook = json.loads(cli("check", "--probe", "--probe-python", sys.executable, "--select", "TL502",
                                 "--format", "json", "probe.ipynb", cwd=tmp_path, timeout=300).stdout)
    assert as_file
    assert [(2, f["line"], f["column"]) for f in as_file] == [(f["cell"], f["line"], f["column"]) for f in in_notebook]


def test_related_places_name_their_cell(tmp_path, cli):
    cells = [code_cell("import torch\nimport torch.nn.functional as F\nmodel = torch.nn.Linear(2, 1)\n"
                       "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)"),
             markdown_cell("Train"),
             code_cell("for x, y in loader:\n    F.mse_loss(model(x), y).backward()\n    optimizer.step()")]
    (tmp_path / "t.ipynb").write_text(notebook_text(cells), encoding="utf-8")
    items = json.loads(cli("check", "--format", "json", "--select", "TL101", "t.ipynb", cwd=tmp_path).stdout)
    (item,) = items
    assert (item["cell"], item["line"]) == (3, 1)
    (related,) = item["related"]
    assert (related["path"], related["cell"], related["line"], related["column"]) == ("t.ipynb", 1, 4, 13)


def test_a_notebook_on_standard_input(tmp_path, cli):
    cells = [code_cell(["import torch.nn.functional as F\n", "%matplotlib inline\n", "p = F.softmax(x)"])]
    text = notebook_text(cells)
    checked = cli("check", "--stdin-filename", "nb.ipynb", "-", stdin=text, cwd=tmp_path)
    assert checked.stdout.startswith("nb.ipynb:cell 1:3:5: TL201 "), checked.stdout + checked.stderr
    fixed = cli("check", "--fix", "--stdin-filename", "nb.ipynb", "-", stdin=text, cwd=tmp_path)
    assert fixed.stdout == text.replace('"p = F.softmax(x)"', '"p = F.softmax(x, dim=-1)"')
    clean = text.replace("F.softmax(x)", "F.softmax(x, dim=1)")
    assert cli("check", "--fix", "--stdin-filename", "nb.ipynb", "-", stdin=clean, cwd=tmp_path).stdout == clean
    broken = cli("check", "--stdin-filename", "nb.ipynb", "-", stdin="{", cwd=tmp_path)
    assert broken.returncode == 2 and "nb.ipynb is not a valid notebook" in broken.stderr


def test_a_cells_last_expression_is_displayed_not_thrown_away(tmp_path, cli):
    # IPython shows the value of a cell's last expression: a non-strict load there prints
    # its missing and unexpected keys.  A `;` hides it, and so does a statement after it.
    setup = "import torch\nmodel = torch.nn.Linear(2, 2)\nstate = torch.load('w.pt', weights_only=True)"
    cells = [code_cell(setup),
             code_cell("# shown\nmodel.load_state_dict(state, strict=False)\n# a trailing comment\n"),
             code_cell("model.load_state_dict(state, strict=False);"),
             code_cell("model.load_state_dict(state, strict=False)\nprint('loaded')"),
             code_cell("if True:\n    model.load_state_dict(state, strict=False)"),
             code_cell("model.load_state_dict(state, strict=False)")]
    (tmp_path / "load.ipynb").write_text(notebook_text(cells), encoding="utf-8")
    items = json.loads(cli("check", "--format", "json", "--select", "TL204", "load.ipynb", cwd=tmp_path).stdout)
    assert [(item["cell"], item["line"]) for item in items] == [(3, 1), (4, 1), (5, 2)]


# A settings cell builds a train and a test loader over image files; only the training
# loop reads the train loader, no cell reads the test loader.
SETTINGS_LOADERS = [
    code_cell("import torch\nfrom torch.utils.data import DataLoader\nfrom torchvision import datasets, transforms\n"
              "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')"),
    code_cell("train_set = datasets.ImageFolder('data/train', transform=transforms.ToTensor())\n"
              "test_set = datasets.ImageFolder('data/test', transform=transforms.ToTensor())\n"
              "train_loader = DataLoader(train_set, batch_size=64, shuffle=True)\n"
              "test_loader = DataLoader(test_set, batch_size=64)"),
    code_cell("model = torch.nn.Conv2d(3, 8, 3).to(device)\n"
              "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
              "for images, labels in train_loader:\n"
              "    optimizer.zero_grad()\n"
              "    model(images.to(device)).mean().backward()\n"
              "    optimizer.step()"),
]


def test_a_loader_no_cell_reads_gets_no_dataloader_advice(tmp_path, cli):
    (tmp_path / "train.ipynb").write_text(notebook_text(SETTINGS_LOADERS), encoding="utf-8")
    completed = cli("check", "--select", "TL405", "--format", "json", "train.ipynb", cwd=tmp_path)
    found = [(item["cell"], item["line"]) for item in json.loads(completed.stdout)]
    assert found == [(2, 3)]  # the train loader only: nothing ever waits on the test loader

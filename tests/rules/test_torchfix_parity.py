"""Parity with TorchFix on TorchFix's own fixtures (read from a checkout, never committed).

Set `TORCHFIX_REPO` to a copy of github.com/pytorch-labs/torchfix (the folder that holds
`tests/fixtures`); without it these tests are skipped.

- every in-scope TOR finding of a `checker/*.py` fixture (its `.txt`) has a TL finding on
  the same line, from the real CLI;
- every `codemod/*.in.py`, fixed by `torch-lsp check --fix` (with `--unsafe-fixes` where
  the catalogue says a fix is unsafe), is its `.out.py` up to formatting: both files are
  compared after resolving every name through the file's own imports, so `models.X`
  under `from torchvision import models` equals `torchvision.models.X` under `import
  torchvision`, and a name that resolves to nothing stays as written (and differs).
"""
from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = os.environ.get("TORCHFIX_REPO")
FIXTURES = Path(REPO) / "tests" / "fixtures" if REPO else None
pytestmark = pytest.mark.skipif(FIXTURES is None or not FIXTURES.is_dir(),
                                reason="set TORCHFIX_REPO to a TorchFix checkout to compare with its fixtures")
# TOR9xx are checks for PyTorch's own test suite (off by default in TorchFix): out of scope.
OUT_OF_SCOPE = re.compile(r"TOR9\d\d")
# Rewrites TorchFix makes that the catalogue calls unsafe (TL703; TL704 for `torch.range` with a
# non-literal end).
NEEDS_UNSAFE = {"reentrant_checkpoint", "range-arange"}


def _cases(kind: str, pattern: str) -> list[Path]:
    return sorted(FIXTURES.glob(f"*/{kind}/{pattern}")) if FIXTURES is not None and FIXTURES.is_dir() else []


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "torch_lsp", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("expected", _cases("checker", "*.txt"), ids=lambda p: f"{p.parent.parent.name}/{p.stem}")
def test_every_torchfix_finding_has_a_tl_finding_on_its_line(expected: Path):
    wanted = [(int(m[1]), m[2]) for m in re.finditer(r"^(\d+):\d+ (TOR\d+)", expected.read_text(), re.M)
              if not OUT_OF_SCOPE.fullmatch(m[2])]
    result = _cli("check", "--format", "json", str(expected.with_suffix(".py")))
    found = {}
    for finding in json.loads(result.stdout):
        found.setdefault(finding["line"], []).append(finding["code"])
    missing = [f"line {line}: {code}" for line, code in wanted if not found.get(line)]
    assert not missing, f"no TL finding where TorchFix reports: {missing}; found {found}"


@pytest.mark.parametrize("before", _cases("codemod", "*.in.py"), ids=lambda p: p.name.removesuffix(".in.py"))
def test_torchfix_rewrite_is_reproduced(before: Path, tmp_path: Path):
    name = before.name.removesuffix(".in.py")
    work = tmp_path / f"{name}.py"
    shutil.copy(before, work)
    flags = ["--unsafe-fixes"] if name in NEEDS_UNSAFE else []
    _cli("check", "--fix", *flags, str(work))
    after = before.with_name(f"{name}.out.py")
    assert canonical(work.read_text()) == canonical(after.read_text()), work.read_text()


def canonical(source: str) -> list[str]:
    """The file's statements without its imports, every imported name spelled out in full."""
    tree = ast.parse(source)
    imports: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                imports[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                imports[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    class Resolve(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            if node.id in imports:
                return ast.copy_location(ast.Name(id=imports[node.id], ctx=node.ctx), node)
            return node

    resolved = Resolve().visit(tree)
    return [ast.unparse(stmt) for stmt in resolved.body if not isinstance(stmt, (ast.Import, ast.ImportFrom))]

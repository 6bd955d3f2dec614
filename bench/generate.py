"""Realistic PyTorch files of a chosen length, built from the bundled examples.

Each generated file is one import header followed by copies of the examples'
top-level definitions (models, datasets, train/eval loops), every copy with its
top-level names renamed, so the file reads like one big training codebase and
still holds the examples' real mistakes.  A `variant` changes every renamed name,
so two variants share no function text (no analysis cache can serve one from the
other).
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
EXAMPLES_DIR = REPO_ROOT / "examples"


@dataclass
class ExampleParts:
    imports: list[str]  # import statements, one source segment each
    body: list[str]  # top-level definitions and statements, one source segment each
    names: list[str]  # top-level names the body defines


def split_example(source: str) -> ExampleParts:
    tree = ast.parse(source)
    parts = ExampleParts([], [], [])
    for node in tree.body:
        segment = _segment_with_decorators(source, node)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            parts.imports.append(segment)
        elif _is_docstring(node) or _is_main_guard(node):
            continue
        else:
            parts.body.append(segment)
            parts.names.extend(_defined_names(node))
    return parts


def _segment_with_decorators(source: str, node: ast.stmt) -> str:
    lines = source.splitlines()
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return "\n".join(lines[first - 1:node.end_lineno])


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _is_main_guard(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and "__main__" in ast.unparse(node.test)


def _defined_names(node: ast.stmt) -> list[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    return []


def rename(segment: str, names: list[str], suffix: str) -> str:
    """Renames the given top-level names where they are used as names (not attributes)."""
    if not names:
        return segment
    pattern = re.compile(r"(?<![.\w])(" + "|".join(map(re.escape, sorted(names, key=len, reverse=True))) + r")\b")
    return pattern.sub(lambda m: m.group(1) + suffix, segment)


def load_examples() -> list[ExampleParts]:
    files = sorted(EXAMPLES_DIR.glob("*.py"))
    if not files:
        raise FileNotFoundError(f"No example scripts in {EXAMPLES_DIR}; the benchmark builds its files from them.")
    return [split_example(f.read_text(encoding="utf-8")) for f in files]


def generate_source(target_lines: int, variant: int = 0) -> str:
    """A valid Python file of exactly `target_lines` lines (padded with comment lines)."""
    examples = load_examples()
    header = _unique(stmt for ex in examples for stmt in ex.imports)
    lines = [f'"""Generated benchmark file: {target_lines} lines, variant {variant}."""', *header]
    copy = 0
    while True:
        added = False
        for ex in examples:
            for segment in ex.body:
                chunk = ["", ""] + rename(segment, ex.names, f"_v{variant}_{copy}").splitlines()
                if len(lines) + len(chunk) > target_lines:
                    return _pad(lines, target_lines)
                lines.extend(chunk)
                added = True
        if not added:
            return _pad(lines, target_lines)
        copy += 1


def _unique(items) -> list[str]:
    seen: dict[str, None] = {}
    for item in items:
        seen.setdefault(item, None)
    return list(seen)


def _pad(lines: list[str], target_lines: int) -> str:
    lines = lines + ["# (padding)"] * (target_lines - len(lines))
    return "\n".join(lines[:target_lines]) + "\n"


def write_generated(directory: Path, sizes: list[int], variant: int = 0) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for size in sizes:
        path = directory / f"generated_{size}_v{variant}.py"
        path.write_text(generate_source(size, variant), encoding="utf-8")
        paths.append(path)
    return paths

"""Every rule is well-formed, documented, fixtured and in the catalogue, and the source keeps two
house rules: no module uses another module's private names, and nothing outside `analysis.py`
writes onto an `Analysis`."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from torch_lsp.diagnostics import all_rules
from torch_lsp.diagnostics.base import FIX_SAFETIES, SEVERITIES, Rule
from tests.shared_files import SHARED, needs_shared

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "rules" / "fixtures"
CATALOGUE = SHARED / "spec" / "rules.md"
SECTIONS = ["## What it does", "## Why is this bad", "## Example", "## Use instead"]

RULES = all_rules()
rule_params = pytest.mark.parametrize("rule", list(RULES.values()), ids=list(RULES))


def rule_classes(base: type = Rule) -> list[type[Rule]]:
    """Every concrete rule class defined anywhere (registered or not)."""
    found = []
    for cls in base.__subclasses__():
        if "code" in vars(cls):
            found.append(cls)
        found.extend(rule_classes(cls))
    return found


def test_rules_are_registered():
    assert RULES, "no rule is registered"


def test_codes_are_unique_and_every_rule_class_is_registered():
    codes = [cls.code for cls in rule_classes()]
    duplicates = sorted({code for code in codes if codes.count(code) > 1})
    assert not duplicates, f"codes defined by more than one rule class: {duplicates}"
    unregistered = sorted(set(codes) - set(RULES))
    assert not unregistered, f"rule classes never registered with @register: {unregistered}"


@rule_params
def test_code_and_name(rule):
    assert re.fullmatch(r"TL\d{3}", rule.code), f"{rule.code} is not TL followed by three digits"
    assert re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", rule.name), f"{rule.code}: name {rule.name!r} is not kebab-case"


def test_names_are_unique():
    names = [rule.name for rule in RULES.values()]
    assert len(names) == len(set(names)), sorted({n for n in names if names.count(n) > 1})


@rule_params
def test_severity_and_fix_safety(rule):
    assert rule.severity in SEVERITIES, f"{rule.code}: severity {rule.severity!r} not in {SEVERITIES}"
    assert rule.fix_safety in FIX_SAFETIES, f"{rule.code}: fix safety {rule.fix_safety!r} not in {FIX_SAFETIES}"
    assert FIX_SAFETIES == ("safe", "unsafe", "none")


@rule_params
def test_docstring_has_the_four_sections_in_order(rule):
    documentation = rule.documentation()
    positions = [documentation.find(section) for section in SECTIONS]
    missing = [s for s, p in zip(SECTIONS, positions) if p < 0]
    assert not missing, f"{rule.code}'s docstring lacks {missing}"
    assert positions == sorted(positions), f"{rule.code}'s docstring sections are out of order"
    for section, start in zip(SECTIONS, positions):
        body = documentation[start + len(section):].split("\n## ", 1)[0].strip()
        assert body, f"{rule.code}'s '{section}' section is empty"
    assert rule.summary(), f"{rule.code} has no summary sentence"


@rule_params
def test_has_a_golden_fixture(rule):
    fixture = FIXTURES / f"{rule.code}.py"
    assert fixture.is_file(), f"{rule.code} has no golden fixture at {fixture.relative_to(REPO)}"
    text = fixture.read_text(encoding="utf-8")
    assert re.search(rf"# expect:.*\b{rule.code}\b", text), (
        f"{fixture.relative_to(REPO)} has no `# expect: {rule.code}` marker"
    )


def catalogue_rows() -> dict[str, list[str]]:
    rows = {}
    for line in CATALOGUE.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if cells and re.fullmatch(r"TL\d{3}", cells[0]):
            rows[cells[0]] = cells
    return rows


@needs_shared("spec", "rules.md")
@rule_params
def test_rule_matches_the_catalogue(rule):
    rows = catalogue_rows()
    assert rule.code in rows, f"{rule.code} is not in the catalogue {CATALOGUE}"
    _, name, severity, fix, *_ = rows[rule.code]
    assert rule.name == name
    assert rule.severity == severity.split(",")[0].strip()
    assert rule.enabled_by_default == ("off by default" not in severity)
    assert fix.startswith(rule.fix_safety), (  # "safe where a drop-in exists" counts as safe
        f"{rule.code}: fix safety {rule.fix_safety!r}, catalogue says {fix!r}"
    )


# -- house rules on the source itself ---------------------------------------------------
SERVER = REPO / "server"


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _source_files(root: Path) -> list[Path]:
    return sorted(root.rglob("*.py"))


# Documented standard-library API whose name starts with an underscore.
PUBLIC_DESPITE_THE_UNDERSCORE = {"os._exit"}  # leaving without waiting for threads


def cross_module_private_uses(root: Path) -> list[str]:
    """`from x import _y`, and `m._y` where `m` is a name an import bound: another module's
    private name, which that module may change without looking for users."""
    found = []
    for path in _source_files(root):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if _is_private(alias.name):
                        found.append(f"{path.relative_to(root.parent)}:{node.lineno}: from {node.module} import {alias.name}")
                    imported.add(alias.asname or alias.name)
            elif isinstance(node, ast.Import):
                imported.update(alias.asname or alias.name.split(".")[0] for alias in node.names)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _is_private(node.attr):
                root_node = node.value
                while isinstance(root_node, ast.Attribute):
                    root_node = root_node.value
                if (isinstance(root_node, ast.Name) and root_node.id in imported
                        and ast.unparse(node) not in PUBLIC_DESPITE_THE_UNDERSCORE):
                    found.append(f"{path.relative_to(root.parent)}:{node.lineno}: {ast.unparse(node)}")
    return found


def _names_an_analysis(node: ast.AST) -> bool:
    """`analysis` or `<anything>.analysis`."""
    return (isinstance(node, ast.Name) and node.id == "analysis") or (
        isinstance(node, ast.Attribute) and node.attr == "analysis"
    )


def writes_onto_analysis(root: Path) -> list[str]:
    """`analysis.x = ...`, `analysis.__dict__[...]`, `setattr(analysis, ...)` outside
    `analysis.py`: facts computed elsewhere go through `analysis.facts`, the one typed cache."""
    found = []
    for path in _source_files(root):
        if path == root / "analysis.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = []
            if isinstance(node, (ast.Assign, ast.Delete)):
                targets = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            written = [t for t in targets if isinstance(t, ast.Attribute) and _names_an_analysis(t.value)]
            if isinstance(node, ast.Attribute) and node.attr == "__dict__" and _names_an_analysis(node.value):
                written.append(node)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("setattr", "vars") \
                    and node.args and _names_an_analysis(node.args[0]):
                written.append(node)
            found += [f"{path.relative_to(root.parent)}:{n.lineno}: {ast.unparse(n)}" for n in written]
    return found


def test_no_module_uses_another_modules_private_names():
    assert not cross_module_private_uses(SERVER), "\n".join(cross_module_private_uses(SERVER))


def test_no_code_outside_analysis_writes_onto_an_analysis():
    assert not writes_onto_analysis(SERVER), "\n".join(writes_onto_analysis(SERVER))


def test_every_package_folder_is_installed_as_torch_lsp():
    """pyproject.toml lists the packages by their import names (server/ installs as
    torch_lsp); a new folder missing from the list would be left out of the wheel."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert config["package-dir"] == {"torch_lsp": "server"}
    folders = sorted(
        ".".join(("torch_lsp",) + init.parent.relative_to(SERVER).parts)
        for init in SERVER.rglob("__init__.py")
    )
    assert sorted(config["packages"]) == folders
